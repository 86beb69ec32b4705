// Every example app (examples/*), in chromium against a real `shed up`:
//  (a) the run club's page is a leaderboard — each runner's miles added up,
//      the most first — and its `log_run` refuses negative miles with the
//      sentence naming the argument and its minimum;
//  (b) each example, deployed with the CLI as the guide deploys it, has
//      pages (every .html) that pass axe-core, best practices included.
// Screenshots at 1280 and 390 px wide under test-artifacts/pages/: run-club.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { openBrowser } from './lib/chromium.mjs'
import { axeViolations } from './lib/axe.mjs'
import { REPO, screenshots } from './lib/places.mjs'
import { connectMcp, shedCli, shedUnderTest, signIn, textOf } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data ? false : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const stamp = Date.now().toString(36)
const EXAMPLES = join(REPO, 'examples')

let browser
let page

before(async () => {
  if (skip) return
  browser = await openBrowser()
  page = await browser.context.newPage()
  await signIn(page, await cli(['login', 'you', '--public-url', shed.url]))
})

after(async () => {
  await browser?.close()
})

/** The web address of `space/slug`'s `path`. */
const addressOf = (slug, path = '') => {
  const address = new URL(shed.url)
  address.hostname = `${shed.space}.${address.hostname}`
  address.pathname = `/${slug}/${path}`
  return address.href
}

test("the run club's board adds up each runner's miles, the most first; negative miles are refused", { skip }, async () => {
  await page.goto(shed.appUrl)
  const [ada, bob] = [`Ada ${stamp}`, `Bob ${stamp}`]
  for (const [who, miles] of [[ada, '3'], [bob, '5'], [ada, '4.5']]) {
    await page.getByLabel('Who ran').fill(who)
    await page.getByLabel('Miles').fill(miles)
    await page.getByRole('button', { name: 'Log run' }).click()
    await page.locator('#runs li', { hasText: `${who} — ${miles} miles` }).first().waitFor()
  }
  const board = await page.locator('#board li').allInnerTexts()
  const adaAt = board.findIndex((line) => line.startsWith(`${ada} —`))
  const bobAt = board.findIndex((line) => line.startsWith(`${bob} —`))
  assert.equal(board[adaAt], `${ada} — 7.5 miles · 2 runs`, board.join(' | '))
  assert.equal(board[bobAt], `${bob} — 5 miles · 1 run`, board.join(' | '))
  assert.ok(adaAt < bobAt, `${ada} (7.5) is not above ${bob} (5): ${board.join(' | ')}`)
  await screenshots(page, 'run-club')

  const mcp = await connectMcp(shed)
  try {
    const refused = await mcp.callTool({
      name: 'command',
      arguments: { name: 'log_run', app: `${shed.space}/${shed.app}`, args: { who: ada, miles: -3, at: 'now' } },
    })
    assert.equal(refused.isError, true, textOf(refused))
    assert.match(textOf(refused), /miles is at least 0, not -3/)
    const listing = await mcp.callTool({ name: 'commands', arguments: { app: `${shed.space}/${shed.app}` } })
    const logRun = listing.structuredContent.commands.find((c) => c.name === 'log_run')
    assert.equal(logRun.input.properties.miles.minimum, 0, JSON.stringify(logRun.input))
  } finally {
    await mcp.close()
  }
})

test('every example app deployed: each of its pages passes axe-core', { skip }, async () => {
  const found = []
  for (const example of (await readdir(EXAMPLES, { withFileTypes: true })).filter((e) => e.isDirectory())) {
    const slug = `axe-${example.name}-${stamp}`.slice(0, 40)
    const app = `${shed.space}/${slug}`
    await cli(['deploy', join(EXAMPLES, example.name), '--to', app, '--as', 'you', '--title', example.name])
    try {
      const pages = (await readdir(join(EXAMPLES, example.name))).filter((f) => f.endsWith('.html'))
      for (const file of pages) {
        await page.goto(addressOf(slug, file === 'index.html' ? '' : file))
        await page.waitForLoadState('networkidle')
        for (const violation of await axeViolations(page)) found.push(`${example.name}/${file}: ${violation}`)
      }
    } finally {
      // Purged, so no later test finds two apps answering the same command.
      await cli(['app', 'trash', app, '--as', 'you'])
      await cli(['app', 'purge', app, '--confirm', app, '--as', 'you'])
    }
  }
  assert.deepEqual(found, [])
})
