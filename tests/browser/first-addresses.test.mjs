// The addresses a newcomer opens, and the small things a careful one notices,
// in chromium against a real `shed up` (tests/browser/against-shed.sh): the
// MCP address opened in a browser is a page saying what it is for, linking to
// home's "Connect your agent"; a space's root lists the apps the browser's
// person may read, each linked to its pages, and signed out says how to sign
// in; an app deployed without index.html has no Open link anywhere, and its
// deploy says it has no pages; /favicon.ico on a space's host is shed's icon;
// the client configuration stays inside a phone's width; the sole owner of a
// space is offered neither Remove nor Change role on their own row.
// Screenshots of each page at 1280 and 390 px under test-artifacts/pages/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { RUN_CLUB, WIDTHS, screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data
    ? false
    : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

/** The space's root, `http://demo.localhost:<port>/`. */
const spaceRoot = () => new URL('/', shed.appUrl).href

let signedIn
let signedOut
let page

before(async () => {
  if (skip) return
  signedIn = await openBrowser()
  signedOut = await openBrowser()
  page = await signedIn.context.newPage()
  await signIn(page, await cli(['login', 'you', '--public-url', shed.url]))
})

after(async () => {
  await signedIn?.close()
  await signedOut?.close()
})

test('the MCP address in a browser says what it is for and how to connect', { skip }, async () => {
  const stranger = await signedOut.context.newPage()
  const opened = await stranger.goto(`${shed.url}/mcp`)
  assert.equal(opened.status(), 200)
  assert.equal(await stranger.locator('#mcp-url').innerText(), `${shed.url}/mcp`)
  assert.match(await stranger.locator('body').innerText(), /signs in by itself/)
  await screenshots(stranger, 'mcp-address')

  // Signed in, its link lands on home's "Connect your agent".
  await page.goto(`${shed.url}/mcp`)
  await page.getByRole('link', { name: 'Connect your agent' }).click()
  await page.waitForURL(`${shed.url}/#connect`)
  assert.ok(await page.locator('#connect').isVisible())
})

test("a space's root lists the apps the person may read, and signed out says to sign in", { skip }, async () => {
  // Signed out, demo (its one app private) shows nothing, as a space nobody
  // made would (a 404), and says how to sign in.
  const stranger = await signedOut.context.newPage()
  const answered = await stranger.goto(spaceRoot())
  assert.equal(answered.status(), 404)
  assert.equal(await stranger.locator(`a[href="${shed.appUrl}"]`).count(), 0, 'a private app listed signed out')
  const signInLink = stranger.getByRole('link', { name: 'sign in' })
  assert.equal(await signInLink.getAttribute('href'), `${shed.url}/_shed/signin`)
  await screenshots(stranger, 'space-root-signed-out')

  const opened = await page.goto(spaceRoot())
  assert.equal(opened.status(), 200)
  await screenshots(page, 'space-root')
  await page.locator(`a[href="${shed.appUrl}"]`).click()
  await page.waitForURL(shed.appUrl)
  assert.match(await page.title(), /Run club/i)
})

test('an app deployed without index.html has no Open link, and its deploy says so', { skip }, async () => {
  const folder = await mkdtemp(join(tmpdir(), 'shed-bare-'))
  try {
    await copyFile(join(RUN_CLUB, 'vocab.json'), join(folder, 'vocab.json'))
    const said = await cli(['deploy', folder, '--to', `${shed.space}/bare`, '--as', 'you'])
    assert.match(said, /^deployed demo\/bare v1: no pages — add an index\.html/)
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
  const bare = new URL('/bare/', shed.appUrl).href
  // Those that list the space's apps still link to the run club's pages.
  for (const [name, at, lists] of [
    ['home-no-pages', `${shed.url}/`, true],
    ['space-no-pages', `${shed.url}/spaces/demo`, true],
    ['app-no-pages', `${shed.url}/spaces/demo/apps/bare`, false],
    ['space-root-no-pages', spaceRoot(), true],
  ]) {
    await page.goto(at)
    assert.equal(await page.locator(`a[href="${bare}"]`).count(), 0, `an Open link to ${bare} on ${at}`)
    const runs = await page.locator(`a[href="${shed.appUrl}"]`).count()
    assert.equal(runs > 0, lists, `links to ${shed.appUrl} on ${at}: ${runs}`)
    assert.match(await page.locator('body').innerText(), /no pages/, at)
    await screenshots(page, name)
  }
})

test("a space's host answers /favicon.ico with shed's icon", { skip }, async () => {
  const icon = await page.goto(new URL('/favicon.ico', shed.appUrl).href)
  assert.equal(icon.status(), 200)
  assert.equal(icon.headers()['content-type'], 'image/x-icon')
})

test("home's client configuration stays inside a phone's width", { skip }, async () => {
  await page.setViewportSize(WIDTHS.phone)
  try {
    await page.goto(`${shed.url}/`)
    const config = await page.locator('#client-config').boundingBox()
    const section = await page.locator('#connect').boundingBox()
    assert.ok(config.x + config.width <= section.x + section.width, `the configuration runs out of its card: ${JSON.stringify({ config, section })}`)
    const wide = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(wide <= WIDTHS.phone.width, `the page is ${wide} px wide at ${WIDTHS.phone.width}`)
    const clipped = await page.locator('#client-config').evaluate((pre) => pre.scrollWidth > pre.clientWidth)
    assert.equal(clipped, false, 'the configuration is cut at the right')
  } finally {
    await page.setViewportSize(WIDTHS.desktop)
  }
})

test('the sole owner is offered neither Remove nor Change role on their own row', { skip }, async () => {
  await page.goto(`${shed.url}/spaces/demo`)
  const mine = page.locator('li[data-member="you"]')
  assert.equal(await mine.getByRole('button').count(), 0)
  assert.match(await mine.innerText(), /the last owner/)
  assert.equal(await page.locator('#invite input[name=handle]').getAttribute('maxlength'), '40')
  await screenshots(page, 'space-sole-owner')
})
