// Self-check of the page api (crates/shed-web/static/app.js), needing no shed:
// the run club's real index.html in chromium, against a stand-in for the web
// door's app address that answers ./api/apply and ./api/query the way the door
// does (JSON data, or a 4xx with {"error": sentence}). It proves the page
// script resolves ./api/ against the page's <base href>, posts JSON with the
// session cookie, passes the filter line through unencoded, and hands the
// server's refusal sentence to the page.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { serveHostPage } from './lib/host-page.mjs'
import { APP_JS, RUN_CLUB, artifact } from './lib/places.mjs'

const REFUSAL = 'you can read this app but not change it — its owner can make you an editor'

let browser
let server
let appAddress
const seen = { applies: [], queries: [] }
const rows = []

const json = (status, body) => ({ status, type: 'application/json', body: JSON.stringify(body) })

before(async () => {
  const [page, style, script] = await Promise.all([
    readFile(join(RUN_CLUB, 'index.html'), 'utf8'),
    readFile(join(RUN_CLUB, 'style.css')),
    readFile(APP_JS),
  ])
  server = await serveHostPage({
    'GET /_shed/app.js': async () => ({ status: 200, type: 'text/javascript', body: script }),
    'GET /runs/': async () => ({ status: 200, type: 'text/html; charset=utf-8', body: `<base href="${appAddress}">${page}` }),
    'GET /runs/style.css': async () => ({ status: 200, type: 'text/css', body: style }),
    'POST /runs/api/apply': async (request, body) => {
      seen.applies.push({ type: request.headers['content-type'], cookie: request.headers.cookie, body })
      const bundle = JSON.parse(body)
      if (bundle.jog.who === 'Mallory') return json(403, { error: REFUSAL })
      const num = rows.length + 1
      rows.push({
        kind: 'jog',
        entity: { eid: `e${num}`, num, version: 1 },
        jog: bundle.jog,
        created: { at: new Date().toISOString(), by: { eid: 'p1', name: 'Jeff' } },
      })
      return json(200, { entities: [`e${num}`], aliases: { $run: `e${num}` } })
    },
    'GET /runs/api/query': async (request, body, url) => {
      seen.queries.push(url.search)
      return json(200, { rows })
    },
  })
  appAddress = `http://demo.localhost:${server.port}/runs/`
  browser = await openBrowser()
  await browser.context.addCookies([{ name: 'shed_session', value: 'stand-in', url: appAddress }])
})

after(async () => {
  await browser?.close()
  await server?.close()
})

test('the run club page logs a run through apply() and shows it through query()', async () => {
  const page = await browser.context.newPage()
  await page.goto(appAddress)
  await page.getByText('No runs yet.').waitFor()
  assert.deepEqual(seen.queries, ['?.jog!&.created!&order=-.created.at&limit=1000'])

  await page.getByLabel('Who ran').fill('Ada')
  await page.getByLabel('Miles').fill('5.2')
  await page.getByRole('button', { name: 'Log run' }).click()
  await page.locator('#runs li', { hasText: 'Ada — 5.2 miles' }).waitFor()
  assert.equal(await page.locator('#runs li').first().innerText(), 'Ada — 5.2 miles · logged by Jeff')
  assert.equal(await page.locator('#board li').first().innerText(), 'Ada — 5.2 miles · 1 run')

  const [write] = seen.applies
  assert.equal(write.type, 'application/json')
  assert.equal(write.cookie, 'shed_session=stand-in')
  assert.deepEqual(JSON.parse(write.body).entity, { eid: '$run' })
  await page.screenshot({ path: await artifact('page-api-index.png'), fullPage: true })
  await page.close()
})

test("a refusal reaches the page as the server's sentence, and nothing is drawn", async () => {
  const page = await browser.context.newPage()
  await page.goto(appAddress)
  await page.locator('#board li').first().waitFor()
  const before = await page.locator('#board li').count()
  await page.getByLabel('Who ran').fill('Mallory')
  await page.getByLabel('Miles').fill('3')
  await page.getByRole('button', { name: 'Log run' }).click()
  await page.getByText(REFUSAL).waitFor()
  assert.equal(await page.locator('#board li').count(), before)
  await page.close()
})

test('query() passes the filter line as written and apply() refuses a non-bundle in words', async () => {
  const page = await browser.context.newPage()
  await page.goto(appAddress)
  const line = '.jog!&.jog.miles>=5&limit=2'
  await page.evaluate((filter) => query(filter), line)
  assert.equal(decodeURIComponent(seen.queries.at(-1)), `?${line}`)
  assert.ok(!seen.queries.at(-1).includes('%26') && !seen.queries.at(-1).includes('%21'), `re-encoded: ${seen.queries.at(-1)}`)
  const refused = await page.evaluate(() => apply('Ada ran').catch((err) => err.message))
  assert.match(refused, /^apply needs a bundle/)
  const notText = await page.evaluate(() => query(5).catch((err) => err.message))
  assert.match(notText, /^query needs a filter line/)
  await page.close()
})
