// Live pages in a real browser against a running shed (issue 38): the run
// club's page open, signed in; a run logged through MCP (the SDK client's
// `command log_run`, as an agent would) appears on its board within a second,
// without a reload — the page's `watch` (/_shed/app.js) hears the write on
// the app's ./api/watch stream. A second tab on another server:
// live-two-servers.test.mjs (PostgreSQL).
//
// Needs the environment lib/shed.mjs describes (SHED_BIN and SHED_DATA too, to
// make a sign-in link); skips when SHED_URL is not set. Screenshot:
// test-artifacts/live-page.png.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { openBrowser } from './lib/chromium.mjs'
import { artifact } from './lib/places.mjs'
import { openWatching } from './lib/live.mjs'
import { shedUnderTest, shedCli, connectMcp, command } from './lib/shed.mjs'

const shed = shedUnderTest()
const { cli } = shedCli()
const skip = shed.url
  ? false
  : 'SHED_URL is not set: start shed with examples/run-club deployed as demo/runs, then set SHED_URL, SHED_TOKEN, SHED_BIN and SHED_DATA'

/** How soon a write through MCP must be on the page. */
const SOON_MS = 1000

let browser
let mcp

before(async () => {
  if (skip) return
  browser = await openBrowser()
  mcp = await connectMcp(shed)
})

after(async () => {
  await mcp?.close()
  await browser?.close()
})

test('a run logged through MCP appears on the open page within a second, without a reload', { skip }, async () => {
  const page = await browser.context.newPage()
  const link = await cli(['login', 'you', '--public-url', shed.url])
  const problems = await openWatching(page, link, shed.appUrl)

  const who = `Agent ${Date.now().toString(36)}`
  const written = Date.now()
  await command(mcp, 'log_run', { who, miles: 3.1, at: new Date().toISOString() })
  const acknowledged = Date.now()
  const row = page.locator('#board li', { hasText: `${who} — 3.1 miles` })
  await row.waitFor({ timeout: SOON_MS })
  const shown = Date.now()
  assert.ok(shown - acknowledged < SOON_MS, `the run took ${shown - acknowledged} ms after MCP answered (${shown - written} ms after the call)`)
  assert.equal(await page.evaluate(() => globalThis.notReloaded), true, 'the page reloaded')
  assert.equal(await page.locator('#problem').isVisible(), false, await page.locator('#problem').innerText())
  assert.deepEqual(problems, [])
  await page.screenshot({ path: await artifact('live-page.png'), fullPage: true })
  await page.close()
})
