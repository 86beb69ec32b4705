// What your agents did (crates/shed-web/src/pages/activity.rs, data.rs,
// entity.rs), in chromium against a real `shed up` and its run club
// (demo/runs): an agent job logs two runs with `shed command run` and edits
// one with `graph.apply`; the person opens Activity, sees "job-N ran
// log_run", opens the edited run from its row, undoes the edit there, and the
// run club's own page shows the old value again. Screenshots at 1280 and 390
// px wide under test-artifacts/pages/: activity, data, data-search, entity,
// entity-undone, entity-long (a long value cut) and entity-whole (it whole).
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
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
const APP = `${shed.space}/${shed.app}`

let owner

before(async () => {
  if (skip) return
  owner = await openBrowser()
})

after(async () => {
  await owner?.close()
})

test("an agent job's edit seen on Activity and undone on its entity's page", { skip }, async () => {
  // The job: two runs logged, then one edited, each through the broker.
  const secret = (await cli(['job', 'create', '--person', 'you', '--allow', `${APP}.*`, '--allow', 'graph.apply'])).trim()
  const queue = { LOOM_PAGE_RPC_QUEUE: join(data, 'command-queue.sock'), LOOM_COMMAND_JOB_ID: secret }
  const run = async (name, args, more = []) => {
    const said = JSON.parse(await cli(['command', 'run', name, ...more, '--args-json', JSON.stringify(args), '--json'], queue))
    assert.equal(said.ok, true, JSON.stringify(said))
    return said
  }
  const who = `Agent ${stamp}`
  const at = new Date().toISOString()
  const first = await run(`${APP}.log_run`, { who, miles: 2, at })
  await run(`${APP}.log_run`, { who: `${who} again`, miles: 3, at })
  const eid = first.body.entities[0]
  await run('graph.apply', { bundle: { entity: { eid }, jog: { miles: 7 } } }, ['--loom', APP])

  const page = await owner.context.newPage()
  assert.match(await signIn(page, await cli(['login', 'you', '--public-url', shed.url])), /^You are signed in as /)
  const board = async () => {
    const tab = await owner.context.newPage()
    try {
      await tab.goto(shed.appUrl)
      await tab.locator('#board li', { hasText: `${who} —` }).first().waitFor()
      return await tab.locator('#board li', { hasText: `${who} —` }).first().innerText()
    } finally {
      await tab.close()
    }
  }
  assert.match(await board(), / — 7 miles/)

  // Activity: the job's writes, newest first, each saying what ran.
  await page.getByRole('link', { name: 'Activity', exact: true }).click()
  const rows = page.locator('#writes li[data-write]')
  const said = await rows.allInnerTexts()
  const job = said.map((text) => /^(job-\d+) ran log_run in /.exec(text)?.[1]).find(Boolean)
  assert.ok(job, `no row says "job-N ran log_run": ${said.join(' | ')}`)
  assert.match(said[0], new RegExp(`^${job} ran graph.apply in ${APP} — 1 entity`), said[0])
  await screenshots(page, 'activity')
  // Narrowed to the job, as the agents page links it.
  await page.goto(`${shed.url}/agents`)
  await page.getByRole('link', { name: `What ${job} did` }).click()
  assert.equal(await page.locator('#writes li[data-write]').count(), 3)

  // The data page lists the run with its new value; the entity page opens from the activity row.
  await page.goto(`${shed.url}/spaces/${shed.space}/apps/${shed.app}/data`)
  assert.match(await page.locator(`tr[data-eid="${eid}"]`).innerText(), /\b7\b/)
  await screenshots(page, 'data')
  // Its search box: a word searches the titles ("Run by Agent …"), mixed
  // freely with a clause; the hint under it shows one of each.
  const box = page.getByRole('textbox', { name: 'Words or filter line' })
  assert.match(await page.locator('#filter-hint').innerText(), /^A word searches the titles and bodies \(Ada\); a clause filters/)
  await box.fill(stamp)
  await box.press('Enter')
  await page.waitForURL(/filter=/)
  assert.equal(await page.locator('tbody tr').count(), 2)
  await box.fill(`${stamp} & .jog.miles>=5`)
  await box.press('Enter')
  await page.waitForURL(/miles/)
  assert.deepEqual(await page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.eid)), [eid])
  await screenshots(page, 'data-search')
  await page.goto(`${shed.url}/activity?job=${job}`)
  await page.locator('#writes li[data-write]').first().getByRole('link', { name: eid.slice(0, 8) }).click()
  const history = page.locator('#history li[data-version]')
  assert.match(await history.first().innerText(), /jog\.miles: 2 → 7/)
  assert.match(await history.first().innerText(), new RegExp(`agent:${job}`))
  await screenshots(page, 'entity')

  // Undo the edit there: the run club's page shows the old value again.
  const edit = await history.first().getAttribute('data-version')
  const write = (await history.first().innerText()).match(/demo\/runs@\d+/)[0]
  await history.first().getByRole('button', { name: `Undo ${write}` }).click()
  assert.match(await page.locator('main .note').innerText(), new RegExp(`^undid ${write}: 1 entity back as they were`))
  assert.match(await history.first().innerText(), /jog\.miles: 7 → 2/)
  assert.match(await history.first().innerText(), new RegExp(`undo of ${write}`))
  assert.equal(Number(await history.first().getAttribute('data-version')), Number(edit) + 1)
  await screenshots(page, 'entity-undone')
  assert.match(await board(), / — 2 miles/)

  // A long value: cut in place with its length, linked to a page of it whole.
  const long = `Long name ${stamp} `.repeat(60).trim()
  await run('graph.apply', { bundle: { entity: { eid }, jog: { who: long } } }, ['--loom', APP])
  await page.goto(`${shed.url}/spaces/${shed.space}/apps/${shed.app}/data/${eid}`)
  const newest = page.locator('#history li[data-version]').first()
  assert.ok(!(await newest.innerText()).includes(long), 'the long value is cut in place')
  await screenshots(page, 'entity-long')
  await newest.getByRole('link', { name: `whole (${long.length} characters)` }).first().click()
  assert.ok((await page.locator('pre.whole').last().innerText()).includes(long), 'the value whole')
  await screenshots(page, 'entity-whole')
  await cli(['job', 'end', job])
})
