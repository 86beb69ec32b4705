// The guide's worked example (docs/apps.md, examples/reading-list), in
// chromium against a real `shed up`: deployed with the CLI as the guide
// deploys it, its page says its language and keeps its content in a main
// landmark, every input has a label, a book added with the form shows with
// who added it (`apply`, then `query` through /_shed/app.js), and
// "Finished" marks it finished. Screenshots at 1280 and 390 px wide under
// test-artifacts/pages/: reading-list.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { REPO, screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data ? false : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const stamp = Date.now().toString(36)
const APP = `${shed.space}/reading-${stamp}`

let browser

before(async () => {
  if (skip) return
  browser = await openBrowser()
})

after(async () => {
  await browser?.close()
})

test('the reading list: a page in its language with a main landmark; a book added, then finished', { skip }, async () => {
  const deployed = await cli(['deploy', join(REPO, 'examples', 'reading-list'), '--to', APP, '--as', 'you', '--title', 'Reading list'])
  assert.match(deployed, new RegExp(`^deployed ${APP} v1: `))
  const page = await browser.context.newPage()
  await signIn(page, await cli(['login', 'you', '--public-url', shed.url]))
  const address = new URL(shed.url)
  address.hostname = `${shed.space}.${address.hostname}`
  address.pathname = `/reading-${stamp}/`
  await page.goto(address.href)

  assert.equal(await page.locator('html').getAttribute('lang'), 'en')
  assert.equal(await page.getByRole('main').count(), 1)
  for (const name of ['Title', 'Author', 'Pages']) {
    assert.equal(await page.getByRole('main').getByLabel(name).count(), 1, `no input labelled ${name}`)
  }
  await page.locator('#empty').waitFor()

  const title = `Dune ${stamp}`
  await page.getByLabel('Title').fill(title)
  await page.getByLabel('Author').fill('Frank Herbert')
  await page.getByLabel('Pages').fill('412')
  await page.getByRole('button', { name: 'Add the book' }).click()
  const book = page.locator('#books li', { hasText: title })
  await book.waitFor()
  assert.match(await book.innerText(), /Frank Herbert, 412 pages · added by You/)
  await screenshots(page, 'reading-list')

  await page.getByRole('button', { name: `Mark ${title} finished` }).click()
  await page.locator('#books li', { hasText: '✓ finished' }).waitFor()
  assert.equal(await page.locator('#problem').isHidden(), true)
})
