// Approvals on the person's pages (crates/shed-web/src/pages/approvals.rs),
// in chromium against a real `shed up`: an app whose log_stroll says
// "confirm": true is deployed beside the run club; an agent job asks to log
// a run through the broker and is told it waits for approval, with the
// address; the person, signed in, sees the header's badge, opens the
// address, approves, and the row lands once (a reload repeats nothing).
// Screenshots at 1280 and 390 px wide under test-artifacts/pages/:
// approvals (the list), approval (one, waiting), approval-approved, and
// approvals-badge (the front page, its header's badge).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data
    ? false
    : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const stamp = Date.now().toString(36)
const APP = `${shed.space}/asks${stamp}`

const VOCAB = { stroll: { who: 'text', miles: 'number' } }
const TOOLS = {
  log_stroll: {
    description: 'Log a stroll, once its person approves',
    input: { who: 'text', miles: 'number' },
    confirm: true,
    apply: { entity: { eid: '$stroll' }, stroll: { who: '{{who}}', miles: '{{miles}}' } },
  },
}

let owner

before(async () => {
  if (skip) return
  owner = await openBrowser()
})

after(async () => {
  await owner?.close()
})

test('a job waits for approval; the person approves it on the page, once', { skip }, async () => {
  const folder = await mkdtemp(join(tmpdir(), 'shed-approvals-'))
  await writeFile(join(folder, 'vocab.json'), JSON.stringify(VOCAB))
  await writeFile(join(folder, 'tools.json'), JSON.stringify(TOOLS))
  await cli(['deploy', folder, '--to', APP, '--as', 'you', '--title', 'Asks first'])
  const secret = (await cli(['job', 'create', '--person', 'you', '--allow', `${APP}.*`])).trim()
  const queue = { LOOM_PAGE_RPC_QUEUE: join(data, 'command-queue.sock'), LOOM_COMMAND_JOB_ID: secret }
  // `shed command run` exits non-zero for an answer that is not ok: its outcome is on stdout.
  const run = async (name, args) => {
    try {
      return JSON.parse(await cli(['command', 'run', name, '--args-json', JSON.stringify(args), '--json'], queue))
    } catch (failed) {
      return JSON.parse(failed.stdout)
    }
  }
  const rows = async () => (await run(`${APP}.find_stroll`, {})).body.rows.length

  const asked = await run(`${APP}.log_stroll`, { who: `Agent ${stamp}`, miles: 3 })
  assert.equal(asked.code, 'waiting-for-approval', JSON.stringify(asked))
  const address = asked.body.address
  assert.match(address, new RegExp(`^${shed.url}/approvals/\\d+$`))
  assert.ok(asked.message.includes(address), asked.message)
  assert.equal(await rows(), 0)

  const page = await owner.context.newPage()
  assert.match(await signIn(page, await cli(['login', 'you', '--public-url', shed.url])), /^You are signed in as /)
  const badge = page.locator('header nav a[href="/approvals"] .badge')
  assert.ok(Number(await badge.innerText()) >= 1, 'the header counts the approval waiting')
  await screenshots(page, 'approvals-badge')

  await page.getByRole('link', { name: /^Approvals/ }).click()
  const item = page.locator(`#approvals li[data-approval="${address.split('/').pop()}"]`)
  assert.match(await item.innerText(), new RegExp(`log_stroll in ${APP}`))
  assert.match(await item.innerText(), /asked by job job-\d+/)
  await screenshots(page, 'approvals')

  await page.goto(address)
  await screenshots(page, 'approval')
  await page.getByRole('button', { name: 'Approve' }).click()
  await page.waitForURL(address)
  assert.match(await page.locator('main').innerText(), new RegExp(`Approved — log_stroll: wrote 1 entity in ${APP}`))
  await screenshots(page, 'approval-approved')
  await page.reload()
  assert.equal(await rows(), 1, 'the row landed once')
  assert.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0)
})
