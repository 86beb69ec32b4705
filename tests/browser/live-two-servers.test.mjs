// Live pages across two servers in a real browser (issue 38): two shed
// servers on one PostgreSQL database, the run club's page open and signed in
// on each (each with its own `shed login` link, in a browser of its own:
// cookies are kept per host, not per port, so one profile would share one
// session between the tabs); a run logged through MCP on server one (the
// official SDK client's `command log_run`, as an agent would) appears on both
// boards within a second, without a reload — server two hears it through
// PostgreSQL's LISTEN/NOTIFY.
//
// `tests/browser/against-shed.sh --two-servers` starts the servers and sets
// SHED_URL, SHED_TOKEN and SHED_LOGIN_URL for server one and
// SHED_SECOND_URL and SHED_SECOND_LOGIN_URL for server two; skips without
// them (one server, SQLite: live-page.test.mjs covers that). Screenshots:
// test-artifacts/live-two-servers-{one,two}.png.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { openBrowser } from './lib/chromium.mjs'
import { artifact } from './lib/places.mjs'
import { openWatching } from './lib/live.mjs'
import { shedUnderTest, connectMcp, command } from './lib/shed.mjs'

const one = shedUnderTest()
const two = shedUnderTest({
  ...process.env,
  SHED_URL: process.env.SHED_SECOND_URL,
  SHED_LOGIN_URL: process.env.SHED_SECOND_LOGIN_URL,
  SHED_APP_URL: '',
})
const skip =
  one.url && two.url && one.loginUrl && two.loginUrl
    ? false
    : 'two servers share a database only on PostgreSQL: run tests/browser/against-shed.sh --two-servers under scripts/postgres-cluster (it sets SHED_SECOND_URL and SHED_SECOND_LOGIN_URL)'

/** How soon a write through MCP must be on both pages. */
const SOON_MS = 1000

const browsers = []
let mcp

before(async () => {
  if (skip) return
  mcp = await connectMcp(one)
})

after(async () => {
  await mcp?.close()
  for (const browser of browsers) await browser.close()
})

/** The run club's page of `shed`, open and watching in a browser of its own,
 * signed in with its sign-in link. */
async function watchingPage(shed) {
  const browser = await openBrowser()
  browsers.push(browser)
  const page = await browser.context.newPage()
  const problems = await openWatching(page, shed.loginUrl, shed.appUrl)
  return { page, problems }
}

test('a run logged through MCP on one server appears on both servers\' open pages within a second, without a reload', { skip }, async () => {
  const tabs = [await watchingPage(one), await watchingPage(two)]
  const who = `Agent ${Date.now().toString(36)}`
  await command(mcp, 'log_run', { who, miles: 4.2, at: new Date().toISOString() })
  const acknowledged = Date.now()
  await Promise.all(
    tabs.map(({ page }) => page.locator('#board li', { hasText: `${who} — 4.2 miles` }).waitFor({ timeout: SOON_MS })),
  )
  const shown = Date.now()
  assert.ok(shown - acknowledged < SOON_MS, `the run took ${shown - acknowledged} ms after MCP answered to reach both pages`)
  for (const [i, { page, problems }] of tabs.entries()) {
    const server = ['one', 'two'][i]
    assert.equal(await page.evaluate(() => globalThis.notReloaded), true, `the page on server ${server} reloaded`)
    assert.equal(await page.locator('#problem').isVisible(), false, await page.locator('#problem').innerText())
    assert.deepEqual(problems, [], `server ${server}'s page`)
    await page.screenshot({ path: await artifact(`live-two-servers-${server}.png`), fullPage: true })
  }
})
