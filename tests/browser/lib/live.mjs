// A run club page open and watching for writes, as the live page tests
// look at it.

import assert from 'node:assert/strict'
import { until } from './wait.mjs'
import { signIn } from './shed.mjs'

/**
 * Signs `page` in with the sign-in `link`, opens the run club at `appUrl`
 * and waits until its board is drawn and its stream of writes is open; the
 * page's `globalThis.notReloaded` is gone if it reloads after. Answers the
 * page errors it reports, kept as they come.
 */
export async function openWatching(page, link, appUrl) {
  const problems = []
  page.on('pageerror', (err) => problems.push(err.message))
  // Counts the streams the page opened.
  await page.addInitScript(() => {
    globalThis.watching = 0
    const Source = globalThis.EventSource
    globalThis.EventSource = class extends Source {
      constructor(...args) {
        super(...args)
        this.addEventListener('open', () => globalThis.watching++)
      }
    }
  })
  assert.match(await signIn(page, link), /^You are signed in as /)
  await page.goto(appUrl)
  await until(`the board or its empty line at ${appUrl}`, async () =>
    (await page.locator('#board li').count()) > 0 || (await page.locator('#empty').isVisible()),
  )
  // Gone if the page reloads.
  await page.evaluate(() => {
    globalThis.notReloaded = true
  })
  // The stream is open before any write (the page opens it as it loads).
  await until(`the page at ${appUrl} watching`, async () => page.evaluate(() => globalThis.watching > 0))
  return problems
}
