// A trashed app's own address (crates/shed-web/src/reply.rs's refusal page),
// in chromium against a real `shed up`: its owner is told it is in the trash
// and follows the link to its page, where Restore is; the page passes
// axe-core (its language, a main landmark). Screenshots at 1280 and 390 px
// wide under test-artifacts/pages/: trashed-address.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { axeViolations } from './lib/axe.mjs'
import { REPO, screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data ? false : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const stamp = Date.now().toString(36)
const SLUG = `old-${stamp}`
const APP = `${shed.space}/${SLUG}`

let browser

before(async () => {
  if (skip) return
  browser = await openBrowser()
})

after(async () => {
  await browser?.close()
})

test("a trashed app's address links its owner to where it is restored", { skip }, async () => {
  await cli(['deploy', join(REPO, 'examples', 'reading-list'), '--to', APP, '--as', 'you', '--title', 'Old list'])
  await cli(['app', 'trash', APP, '--as', 'you'])
  const page = await browser.context.newPage()
  await signIn(page, await cli(['login', 'you', '--public-url', shed.url]))
  const address = new URL(shed.url)
  address.hostname = `${shed.space}.${address.hostname}`
  address.pathname = `/${SLUG}/`
  const answered = await page.goto(address.href)
  assert.equal(answered.status(), 403)
  assert.match(await page.getByRole('main').innerText(), new RegExp(`${APP} is in the trash — an owner or an editor of ${shed.space} can restore it`))
  assert.deepEqual(await axeViolations(page), [])
  await screenshots(page, 'trashed-address')

  const appPage = `${shed.url}/spaces/${shed.space}/apps/${SLUG}`
  await page.getByRole('link', { name: appPage }).click()
  await page.waitForURL(appPage)
  await page.getByRole('button', { name: 'Restore' }).click()
  await page.waitForURL(appPage)
  assert.equal((await page.goto(address.href)).status(), 200)
  await page.close()
})
