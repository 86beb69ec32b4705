// Post, redirect, get (crates/shed-web/src/pages/notice.rs), in chromium
// against a real `shed up`: every form of the platform's pages is pressed,
// then the page it lands on reloaded — and nothing happens twice: one token,
// one member, one roll back, trash and restore once, a job ended once, one
// undo; the outcome is shown once, on the page the form lands on, and a
// reload shows no outcome at all. A visit to a form's own address is a page
// saying what it is for. Screenshots at 1280 and 390 px wide under
// test-artifacts/pages/: reload-token-made, reload-rolled-back,
// reload-form-address.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { RUN_CLUB, screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, connectMcp, signIn, textOf } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data
    ? false
    : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const stamp = Date.now().toString(36)
const APP = `demo/reloads${stamp}`
const APP_PAGE = `/spaces/demo/apps/reloads${stamp}`

let browser
let folder

before(async () => {
  if (skip) return
  browser = await openBrowser()
  folder = await mkdtemp(join(tmpdir(), 'shed-reloads-'))
})

after(async () => {
  await browser?.close()
  if (folder) await rm(folder, { recursive: true, force: true })
  // The app this test made goes, so the tests after it see the shed as it
  // was (one run club answering `leaderboard`).
  if (!skip) {
    await cli(['app', 'trash', APP, '--as', 'you']).catch(() => {})
    await cli(['app', 'purge', APP, '--confirm', APP, '--as', 'you']).catch(() => {})
  }
})

/** The outcome lines on top of a page: notes and refusals. */
const outcomes = (page) => page.locator('main .note, main .refused').allInnerTexts()

/** Presses what `press` presses, checks the page it lands on says `said`,
 * then reloads it: no outcome at all, and `unchanged` still holds. */
async function pressThenReload(page, press, said, unchanged) {
  await press()
  const shown = await outcomes(page)
  assert.equal(shown.length, 1, JSON.stringify(shown))
  assert.match(shown[0], said)
  const at = new URL(page.url()).pathname
  assert.ok(!/\/(tokens|revoke|remove|rollback|trash|restore|end|undo)$/.test(at), `landed on a form's address: ${at}`)
  await page.reload()
  assert.deepEqual(await outcomes(page), [], `a reload of ${page.url()} shows nothing done`)
  await unchanged()
}

test('every form pressed, then its page reloaded: nothing happens twice', { skip }, async () => {
  const page = await browser.context.newPage()
  await signIn(page, await cli(['login', 'you', '--public-url', shed.url]))

  // A token: made once, shown once.
  await page.goto(`${shed.url}/`)
  await page.getByLabel('Token name').fill(`reload ${stamp}`)
  const tokensNamed = async () => {
    await page.goto(`${shed.url}/account`)
    const count = await page.locator('#tokens li', { hasText: `reload ${stamp}` }).count()
    await page.goBack()
    return count
  }
  let token
  await pressThenReload(
    page,
    async () => {
      await page.getByRole('button', { name: 'Make a token' }).click()
      token = (await page.locator('#token').innerText()).trim()
      await screenshots(page, 'reload-token-made')
    },
    /^Your token reload /,
    async () => {
      assert.equal(await page.locator('#token').count(), 0, 'the token is shown once')
      assert.equal(await tokensNamed(), 1, 'one token')
    },
  )

  // A member: invited, their role changed, removed — each once.
  const handle = `rl${stamp}`
  const memberRows = () => page.locator(`li[data-member="${handle}"]`).count()
  await page.goto(`${shed.url}/spaces/demo`)
  await page.getByLabel('Handle').fill(handle)
  await page.locator('#invite select[name=role]').selectOption('editor')
  await pressThenReload(
    page,
    () => page.getByRole('button', { name: 'Invite' }).click(),
    new RegExp(`^@${handle} is new here`),
    async () => assert.equal(await memberRows(), 1),
  )
  const row = page.locator(`li[data-member="${handle}"]`)
  await row.locator('select').selectOption('viewer')
  await pressThenReload(
    page,
    () => row.getByRole('button', { name: 'Change role' }).click(),
    new RegExp(`^@${handle} is now viewer of demo\\.$`),
    async () => assert.equal(await row.locator('.tag').innerText(), 'viewer'),
  )
  await pressThenReload(
    page,
    () => row.getByRole('button', { name: /^Remove/ }).click(),
    new RegExp(`^@${handle} \\(viewer\\) is no longer a member of demo\\.$`),
    async () => assert.equal(await memberRows(), 0),
  )

  // An app of two versions: rolled back, trashed, restored — each once.
  const app = join(folder, 'run-club')
  await cp(RUN_CLUB, app, { recursive: true })
  await cli(['deploy', app, '--to', APP, '--as', 'you'])
  // The same folder again is no new version: a new title is one.
  await cli(['deploy', app, '--to', APP, '--as', 'you', '--title', 'Reloads'])
  await page.waitForTimeout(1200) // the server's watcher reads a CLI deploy within 500 ms
  await page.goto(`${shed.url}${APP_PAGE}`)
  const versions = () => page.locator('li[data-version]').count()
  assert.equal(await versions(), 2)
  await pressThenReload(
    page,
    async () => {
      await page.locator('li[data-version="1"]').getByRole('button', { name: 'Roll back to v1' }).click()
      await screenshots(page, 'reload-rolled-back')
    },
    new RegExp(`^rolled ${APP} back to v1: now v3`),
    async () => assert.equal(await versions(), 3, 'one roll back'),
  )
  await pressThenReload(
    page,
    () => page.getByRole('button', { name: 'Trash', exact: true }).click(),
    new RegExp(`^${APP} is in the trash: `),
    async () => assert.ok(await page.getByRole('button', { name: 'Restore' }).isVisible()),
  )
  await pressThenReload(
    page,
    () => page.getByRole('button', { name: 'Restore' }).click(),
    new RegExp(`^${APP} is out of the trash`),
    async () => assert.ok(await page.getByRole('button', { name: 'Trash', exact: true }).isVisible()),
  )

  // A write undone on the app's activity: once.
  const agent = await connectMcp({ url: shed.url, token })
  const run = { who: `Reload ${stamp}`, miles: 3, at: new Date().toISOString() }
  const logged = await agent.callTool({ name: 'command', arguments: { name: 'log_run', app: APP, args: run } })
  assert.ok(!logged.isError, textOf(logged))
  await agent.close()
  await page.goto(`${shed.url}${APP_PAGE}/activity`)
  const undoRows = () => page.locator('#writes li[data-write]', { hasText: 'ran undo' }).count()
  await pressThenReload(
    page,
    () => page.getByRole('button', { name: /^Undo / }).first().click(),
    new RegExp(`^undid ${APP}@`),
    async () => assert.equal(await undoRows(), 1, 'one undo'),
  )

  // A job: ended once.
  await cli(['job', 'create', '--person', 'you', '--allow', `${APP}.*`])
  await page.goto(`${shed.url}/agents`)
  const job = page.locator('#jobs li', { hasText: 'running' }).first()
  const name = await job.getAttribute('data-job')
  await pressThenReload(
    page,
    () => job.getByRole('button', { name: `End ${name}` }).click(),
    new RegExp(`^Ended ${name}: its agent runs nothing more\\.$`),
    async () => assert.equal(await page.locator(`li[data-job="${name}"] .tag`).innerText(), 'ended'),
  )

  // A form's own address, visited: what it is for, a way back, nothing done.
  const visited = await page.goto(`${shed.url}/account/tokens`)
  assert.equal(visited.status(), 405)
  assert.match(await page.locator('body').innerText(), /This address makes a token when its button is pressed/)
  await screenshots(page, 'reload-form-address')
  await page.getByRole('link', { name: 'Home' }).click()
  assert.equal(new URL(page.url()).pathname, '/')
  assert.equal(await tokensNamed(), 1, 'still one token')
})
