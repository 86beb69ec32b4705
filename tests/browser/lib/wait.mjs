// Waiting on a condition (never on a fixed time).

/**
 * Polls `probe` until it returns a truthy value and resolves to that value;
 * after `timeout` ms rejects with an Error saying what was awaited and the
 * last thing seen (`probe` may throw; its last error is reported).
 */
export async function until(what, probe, { timeout = 15000, every = 50 } = {}) {
  const end = Date.now() + timeout
  let last
  for (;;) {
    try {
      const value = await probe()
      if (value) return value
      last = value
    } catch (err) {
      last = err
    }
    if (Date.now() > end) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last)
      throw new Error(`waited ${timeout} ms for ${what}; last saw ${seen}`)
    }
    await new Promise((resolve) => setTimeout(resolve, every))
  }
}
