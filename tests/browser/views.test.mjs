// The run club in a real browser against a running shed (issue 7):
//  (b) the leaderboard view ui://<space>/<app>/leaderboard.html, read through the
//      MCP door and hosted by the real ext-apps AppBridge, fed a real
//      `command leaderboard` answer: it draws the rows, loads ./style.css through
//      its <base href>, reports its size, and redraws through a forwarded
//      tools/call of `command since` ("today only");
//  (a) the app's index page, signed in on the web (open the link, press its
//      button): log a run, see it on the board.
// Screenshots go to test-artifacts/view.png and test-artifacts/index.png.
//
// Needs the run club (examples/run-club) deployed as SHED_SPACE/SHED_APP
// (default demo/runs) and the environment lib/shed.mjs describes; skips when
// SHED_URL is not set.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { openBrowser } from './lib/chromium.mjs'
import { serveHostPage } from './lib/host-page.mjs'
import { hostView, boardRows } from './lib/view-host.mjs'
import { artifact } from './lib/places.mjs'
import { until } from './lib/wait.mjs'
import { shedUnderTest, connectMcp, command, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const skip = shed.url
  ? false
  : 'SHED_URL is not set: start shed with examples/run-club deployed as demo/runs, then set SHED_URL, SHED_TOKEN and SHED_LOGIN_URL'

const ACCENT = 'rgb(47, 111, 78)' // --accent in the run club's style.css
const stamp = Date.now().toString(36)

let browser
let hostPage
let mcp

before(async () => {
  if (skip) return
  assert.ok(shed.token, 'SHED_TOKEN is not set: give a bearer token of a member of the space (shed token create <handle>)')
  browser = await openBrowser()
  hostPage = await serveHostPage()
  mcp = await connectMcp(shed)
})

after(async () => {
  await mcp?.close()
  await browser?.close()
  await hostPage?.close()
})

test('the leaderboard view draws a real answer, loads its style, sizes itself, and redraws through command', { skip }, async () => {
  const uri = `ui://${shed.space}/${shed.app}/leaderboard.html`
  const first = `Ada ${stamp}`
  await command(mcp, 'log_run', { who: first, miles: 5, at: new Date().toISOString() })

  // An agent finds the view where the spec puts it: beside the command in `commands`.
  const listing = await mcp.callTool({ name: 'commands', arguments: {} })
  const leaderboard = (listing.structuredContent?.commands || []).find((c) => c.name === 'leaderboard')
  assert.ok(leaderboard, `commands does not list leaderboard: ${JSON.stringify(listing.structuredContent)}`)
  assert.equal(leaderboard.view, uri)

  const listed = (await mcp.listResources()).resources.find((r) => r.uri === uri)
  assert.ok(listed, `resources/list does not list ${uri}`)
  const [resource] = (await mcp.readResource({ uri })).contents
  assert.equal(resource.mimeType, 'text/html;profile=mcp-app')
  // A private app's view loads its files through an address keyed for the
  // member who read it, on the app's own origin: the frame has no cookie.
  const base = /<base href="([^"]*)"/.exec(resource.text)?.[1] || ''
  const appPath = new URL(shed.appUrl).pathname
  const keyed = new RegExp(`^${new URL(shed.appUrl).origin}/_shed/view/[0-9a-f]{32}${appPath}$`)
  assert.match(base, keyed, 'the view should carry a <base href> keyed for its reader at the app')

  const answer = await command(mcp, 'leaderboard')
  // The view draws one line per runner, their miles added up.
  const runners = (result) => new Set(result.structuredContent.rows.map((row) => row.jog.who)).size
  const drawn = runners(answer)
  assert.ok(drawn >= 1, 'the leaderboard answered no rows after a run was logged')

  const forwarded = []
  const hosted = await hostView(browser.context, {
    hostUrl: hostPage.hostUrl,
    resource,
    listedMeta: listed._meta,
    toolInput: {},
    toolResult: answer,
    callTool: async (params) => {
      const result = await mcp.callTool(params)
      forwarded.push({ params, result })
      return result
    },
  })

  await until(`the view to draw ${drawn} rows`, async () => (await boardRows(hosted.view)).length === drawn)
  assert.ok((await boardRows(hosted.view)).some((row) => row === `${first} — 5 miles · 1 run`))

  // ./style.css came from the app's origin through the <base href>, allowed by the view's CSP.
  assert.equal(await hosted.view.locator('#today').evaluate((b) => getComputedStyle(b).backgroundColor), ACCENT)
  assert.ok(
    hosted.responses.some((r) => r.url === `${base}style.css` && r.status === 200),
    `no 200 for ${base}style.css among ${JSON.stringify(hosted.responses)}`,
  )

  const size = await until('a size-changed with a height', async () =>
    (await hosted.host()).sizes.find((s) => s.height > 0),
  )
  assert.ok(size.width > 0, `size-changed without a width: ${JSON.stringify(size)}`)

  // Somebody logs another run; "today only" redraws through the host and sees it.
  const second = `Grace ${stamp}`
  await command(mcp, 'log_run', { who: second, miles: 7.5, at: new Date().toISOString() })
  await hosted.view.getByRole('button', { name: 'today only' }).click()
  await until(`the redraw to show ${second}`, async () =>
    (await boardRows(hosted.view)).some((row) => row.startsWith(`${second} — 7.5 miles`)),
  )
  assert.equal(forwarded.length, 1)
  assert.equal(forwarded[0].params.name, 'command')
  assert.equal(forwarded[0].params.arguments.name, 'since')
  assert.ok(!forwarded[0].result.isError, JSON.stringify(forwarded[0].result))
  assert.equal((await boardRows(hosted.view)).length, runners(forwarded[0].result))
  assert.deepEqual(hosted.problems, [])

  await hosted.page.screenshot({ path: await artifact('view.png'), fullPage: true })
  await hosted.page.close()
})

test('the run club page, signed in, logs a run and shows it on the board', { skip }, async () => {
  assert.ok(shed.loginUrl, "SHED_LOGIN_URL is not set: give a one-time sign-in link (the web door's `shed login <handle>`)")
  const page = await browser.context.newPage()
  const problems = []
  page.on('pageerror', (err) => problems.push(err.message))

  assert.match(await signIn(page, shed.loginUrl), /^You are signed in as /)
  await page.goto(shed.appUrl)
  await until('the board or its empty line', async () =>
    (await page.locator('#board li').count()) > 0 || (await page.locator('#empty').isVisible()),
  )
  assert.equal(await page.locator('#problem').isVisible(), false, await page.locator('#problem').innerText())

  const who = `Linus ${stamp}`
  await page.getByLabel('Who ran').fill(who)
  await page.getByLabel('Miles').fill('4.2')
  await page.getByRole('button', { name: 'Log run' }).click()
  const logged = page.locator('#runs li', { hasText: `${who} — 4.2 miles` })
  await logged.waitFor()
  assert.match(await logged.innerText(), / · logged by \S/)
  assert.equal(await page.locator('#problem').isVisible(), false)
  assert.deepEqual(problems, [])

  await page.screenshot({ path: await artifact('index.png'), fullPage: true })
  await page.close()
})
