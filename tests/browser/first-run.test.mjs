// The first run's way onto the web, in chromium against a real `shed up` on a
// fresh folder: the one-time sign-in link `shed up` printed
// (SHED_UP_SIGN_IN_URL, taken by against-shed.sh), opened and "Sign in"
// pressed, lands signed in on the home page, with the demo space and the
// MCP address on it. Screenshots `first-run-home` at 1280 and 390 px.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { openBrowser } from './lib/chromium.mjs'
import { screenshots } from './lib/places.mjs'
import { shedUnderTest, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const link = process.env.SHED_UP_SIGN_IN_URL || ''
const skip = shed.url ? false : 'SHED_URL is not set: run tests/browser/against-shed.sh'

let browser

before(async () => {
  if (skip) return
  browser = await openBrowser()
})

after(async () => {
  await browser?.close()
})

test('the sign-in link shed up prints lands signed in on the home page', { skip }, async () => {
  assert.ok(link.startsWith(`${shed.url}/_shed/login?key=`), `shed up printed no sign-in link (Sign in: …), only ${JSON.stringify(link)}`)
  const page = await browser.context.newPage()
  assert.match(await signIn(page, link), /^You are signed in as @you\./)
  assert.equal(page.url(), `${shed.url}/`)
  assert.equal(await page.locator('#mcp-url').innerText(), `${shed.url}/mcp`)
  assert.ok(await page.locator('#spaces a[href="/spaces/demo"]').isVisible())
  await screenshots(page, 'first-run-home')
})
