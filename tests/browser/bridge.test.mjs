// Self-check of the host page, needing no shed: the run club's real view
// (examples/run-club/leaderboard.html) hosted by the real ext-apps AppBridge,
// fed a tool result shaped like shed's `command leaderboard` answer, with a
// stand-in for the app's address serving style.css. It proves the host side
// that views.test.mjs uses against the real MCP door: handshake, drawing,
// CSP and <base href>, size reports, and a forwarded tools/call redraw.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { serveHostPage } from './lib/host-page.mjs'
import { hostView, boardRows } from './lib/view-host.mjs'
import { artifact, RUN_CLUB } from './lib/places.mjs'
import { until } from './lib/wait.mjs'

const row = (num, who, miles, by) => ({
  kind: 'jog',
  entity: { eid: `e${num}`, num, version: 1 },
  jog: { who, miles, at: '2026-03-01T07:00:00Z' },
  created: { at: '2026-03-01T07:05:00Z', by: { eid: 'p1', name: by } },
})

const answer = (rows, name) => ({
  content: [{ type: 'text', text: `${name}: ${rows.length} rows in demo/runs` }],
  structuredContent: { rows },
})

let browser
let server
let appAddress
let view

before(async () => {
  const style = await readFile(join(RUN_CLUB, 'style.css'))
  server = await serveHostPage({
    'GET /runs/style.css': async () => ({ status: 200, type: 'text/css', body: style }),
  })
  // The app's own address on its space's origin, as the door puts it in <base href>.
  appAddress = `http://demo.localhost:${server.port}/runs/`
  view = await readFile(join(RUN_CLUB, 'leaderboard.html'), 'utf8')
  browser = await openBrowser()
})

after(async () => {
  await browser?.close()
  await server?.close()
})

/** The view as the door serves it: a <base href> at the app's address, and its origin in the CSP. */
const resourceWith = (csp) => ({
  uri: 'ui://demo/runs/leaderboard.html',
  mimeType: 'text/html;profile=mcp-app',
  text: `<base href="${appAddress}">${view}`,
  _meta: { ui: { csp } },
})

test('the host page draws the run club view, loads its style through <base href>, and redraws through tools/call', async () => {
  const origin = new URL(appAddress).origin
  const calls = []
  const hosted = await hostView(browser.context, {
    hostUrl: server.hostUrl,
    resource: resourceWith({ resourceDomains: [origin], baseUriDomains: [origin] }),
    toolResult: answer([row(1, 'Ada', 5, 'Jeff'), row(2, 'Grace', 3.5, 'Jeff')], 'leaderboard'),
    callTool: async (params) => {
      calls.push(params)
      return answer([row(1, 'Ada', 5, 'Jeff'), row(2, 'Grace', 3.5, 'Jeff'), row(3, 'Linus', 10, 'Jeff')], 'since')
    },
  })

  await until('two rows on the board', async () => (await boardRows(hosted.view)).length === 2)
  assert.deepEqual(await boardRows(hosted.view), ['Ada — 5 miles · 1 run', 'Grace — 3.5 miles · 1 run'])

  // style.css came through the <base href>: its accent colour is on the button, and the request was answered.
  const accent = await hosted.view.locator('#today').evaluate((button) => getComputedStyle(button).backgroundColor)
  assert.equal(accent, 'rgb(47, 111, 78)')
  assert.ok(
    hosted.responses.some((r) => r.url === `${appAddress}style.css` && r.status === 200),
    `style.css was not fetched from ${appAddress}: saw ${JSON.stringify(hosted.responses)}`,
  )

  const sized = await until('a size-changed with a height', async () =>
    (await hosted.host()).sizes.find((size) => size.height > 0),
  )
  assert.ok(sized.width > 0, `size-changed without a width: ${JSON.stringify(sized)}`)

  await hosted.view.getByRole('button', { name: 'today only' }).click()
  await until('the redraw with three rows', async () => (await boardRows(hosted.view)).length === 3)
  assert.equal(calls.length, 1)
  assert.equal(calls[0].name, 'command')
  assert.equal(calls[0].arguments.name, 'since')
  assert.match(calls[0].arguments.args.since, /^\d{4}-\d{2}-\d{2}$/)
  assert.deepEqual((await hosted.host()).toolCalls.map((call) => call.name), ['command'])
  assert.deepEqual(hosted.problems, [], `saw ${JSON.stringify(hosted.responses)}`)

  await hosted.page.screenshot({ path: await artifact('bridge-view.png'), fullPage: true })
  await hosted.page.close()
})

test('without the app origin in its CSP the view keeps its rows but not its style', async () => {
  const hosted = await hostView(browser.context, {
    hostUrl: server.hostUrl,
    resource: resourceWith(undefined),
    toolResult: answer([row(1, 'Ada', 5, 'Jeff')], 'leaderboard'),
    callTool: async () => assert.fail('no tools/call was expected'),
  })
  await until('one row on the board', async () => (await boardRows(hosted.view)).length === 1)
  const background = await hosted.view.locator('#today').evaluate((button) => getComputedStyle(button).backgroundColor)
  assert.notEqual(background, 'rgb(47, 111, 78)', 'style.css applied although the CSP names no origin for it')
  assert.ok(
    hosted.problems.some((problem) => /Content Security Policy/i.test(problem)),
    `expected the browser to report a CSP refusal; saw ${JSON.stringify(hosted.problems)}`,
  )
  await hosted.page.close()
})
