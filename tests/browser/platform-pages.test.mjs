// The person's pages on the platform host (crates/shed-web/src/pages/), in
// chromium against a real `shed up`: sign in by link; make a token on home and
// see it once; invite a member and sign them in with their link in a second
// browser; make them a viewer and see their MCP `command` write refused at
// once; the last owner offered no way to step down; revoke a token on the
// account page and see /mcp answer 401; end a job on the agents page and see
// `shed command run` refused. Every page is
// screenshotted at 1280 and 390 px wide under test-artifacts/pages/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, connectMcp, command, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data
    ? false
    : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const VIEWER = 'you can read this app but not change it — its owner can make you an editor'
const stamp = Date.now().toString(36)

let owner
let member

/** A fresh one-time sign-in link for `handle`. */
const loginLink = (handle) => cli(['login', handle, '--public-url', shed.url])

/** A page's outcome line: the note or the refusal on top of it. */
const outcome = (page) => page.locator('main .note, main .refused').first().innerText()

before(async () => {
  if (skip) return
  owner = await openBrowser()
  member = await openBrowser()
})

after(async () => {
  await owner?.close()
  await member?.close()
})

test('the pages: tokens, members, roles, revoking and ending jobs, through the browser', { skip }, async () => {
  const page = await owner.context.newPage()
  assert.match(await signIn(page, await loginLink('you')), /^You are signed in as /)
  await page.goto(`${shed.url}/`)
  assert.equal(await page.locator('#mcp-url').innerText(), `${shed.url}/mcp`)
  assert.ok(await page.locator('#spaces a[href="/spaces/demo"]').isVisible())
  await screenshots(page, 'home')

  // A token made on home is shown once, and the configuration carries it.
  await page.getByLabel('Token name').fill(`laptop ${stamp}`)
  await page.getByRole('button', { name: 'Make a token' }).click()
  const token = (await page.locator('#token').innerText()).trim()
  assert.match(token, /^shed_[0-9a-f]{32}$/)
  assert.ok((await page.locator('#client-config').innerText()).includes(`Bearer ${token}`))
  await screenshots(page, 'home-token-made')
  await page.goto(`${shed.url}/`)
  assert.equal(await page.locator('#token').count(), 0)
  assert.ok(!(await page.content()).includes(token), 'the token is shown once')
  const mine = await connectMcp({ url: shed.url, token })
  await mine.close()

  // Invite a new handle: a link to send, which signs them in on another browser.
  const handle = `pat${stamp}`
  await page.goto(`${shed.url}/spaces/demo`)
  await page.getByLabel('Handle').fill(handle)
  await page.locator('#invite select[name=role]').selectOption('editor')
  await page.getByRole('button', { name: 'Invite' }).click()
  const link = (await page.locator('#invite-link').innerText()).trim()
  assert.ok(link.startsWith(`${shed.url}/_shed/login?key=`), link)
  await screenshots(page, 'space-invited')
  const theirs = await member.context.newPage()
  assert.match(await signIn(theirs, link), new RegExp(`^You are signed in as @${handle}\\.`))
  await theirs.getByLabel('Token name').fill('their agent')
  await theirs.getByRole('button', { name: 'Make a token' }).click()
  const theirToken = (await theirs.locator('#token').innerText()).trim()
  const agent = await connectMcp({ url: shed.url, token: theirToken })
  await command(agent, 'log_run', { who: `Pat ${stamp}`, miles: 3, at: new Date().toISOString() })

  // Made a viewer on the space's page: their next write is refused.
  await page.goto(`${shed.url}/spaces/demo`)
  const row = page.locator(`li[data-member="${handle}"]`)
  await row.locator('select').selectOption('viewer')
  await row.getByRole('button', { name: 'Change role' }).click()
  assert.equal(await outcome(page), `@${handle} is now viewer of demo.`)
  assert.equal(await page.locator(`li[data-member="${handle}"] .tag`).innerText(), 'viewer')
  await screenshots(page, 'space')
  await assert.rejects(
    command(agent, 'log_run', { who: `Pat ${stamp}`, miles: 4, at: new Date().toISOString() }),
    (err) => err.message.includes(VIEWER),
  )
  await agent.close()

  // The last owner cannot step down: the page offers them no way to, and
  // says why (the host's refusal of a post is platform_pages.rs's).
  const lastOwner = page.locator('li[data-member="you"]')
  assert.equal(await lastOwner.locator('select').count(), 0)
  assert.equal(await lastOwner.getByRole('button').count(), 0)
  assert.match(await lastOwner.innerText(), /the last owner — make another owner/)

  // Revoked on the account page: /mcp answers 401 at once.
  await page.goto(`${shed.url}/account`)
  await screenshots(page, 'account')
  const tokenRow = page.locator('#tokens li', { hasText: `laptop ${stamp}` })
  await tokenRow.getByRole('button', { name: /^Revoke/ }).click()
  assert.match(await outcome(page), /^Revoked \d+: it is refused from its next request on\.$/)
  const answer = await fetch(`${shed.url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'revoked', version: '1' } },
    }),
  })
  assert.equal(answer.status, 401)

  // A job made with the CLI, ended on the agents page: its runs are refused.
  const secret = await cli(['job', 'create', '--person', 'you', '--allow', 'demo/runs.*'])
  const queue = { LOOM_PAGE_RPC_QUEUE: join(data, 'command-queue.sock'), LOOM_COMMAND_JOB_ID: secret }
  const runArgs = JSON.stringify({ who: `Job ${stamp}`, miles: 2, at: new Date().toISOString() })
  const ran = JSON.parse(await cli(['command', 'run', 'demo/runs.log_run', '--args-json', runArgs, '--json'], queue))
  assert.equal(ran.ok, true, JSON.stringify(ran))
  await page.goto(`${shed.url}/agents`)
  const job = page.locator('#jobs li', { hasText: 'running' }).first()
  const name = await job.getAttribute('data-job')
  await screenshots(page, 'agents')
  await job.getByRole('button', { name: `End ${name}` }).click()
  assert.equal(await outcome(page), `Ended ${name}: its agent runs nothing more.`)
  assert.equal(await page.locator(`li[data-job="${name}"] .tag`).innerText(), 'ended')
  // A refusal exits 3 with its outcome on stdout.
  const refusedRun = await cli(['command', 'run', 'demo/runs.log_run', '--args-json', runArgs, '--json'], queue).then(
    (stdout) => assert.fail(`an ended job's run exited 0: ${stdout}`),
    (error) => {
      assert.equal(error.code, 3, String(error))
      return error.stdout
    },
  )
  const refused = JSON.parse(refusedRun)
  assert.equal(refused.ok, false, JSON.stringify(refused))
  assert.match(refused.message, /ended/, JSON.stringify(refused))
  await screenshots(page, 'agents-ended')

  // Their pages, at both widths, as the member sees them.
  for (const [name, path] of [['member-home', '/'], ['member-account', '/account'], ['member-space', '/spaces/demo']]) {
    await theirs.goto(`${shed.url}${path}`)
    await screenshots(theirs, name)
  }
})
