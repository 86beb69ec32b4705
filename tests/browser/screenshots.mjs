// Screenshots at 1280 and 390 px wide of the pages issue #39 touched, taken
// against a real `shed up` (run by against-shed.sh, which sets SHED_URL and
// the rest), for a person to look at: the data page, an app's page in the
// trash, the trashed app's own address, a spent sign-in link, the not-found
// page, home after making a token, activity with an undone row,
// the consent page, and the run club and reading list pages. Each page is
// also checked with axe-core, its violations printed. Not a test: it writes
// PNGs and prints one line per page.
//
//   SHOTS=/tmp/shots tests/browser/against-shed.sh path/to/shed screenshots.mjs
//
// PNGs go to $SHOTS (default /tmp/shed-shots), never into the repo.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { openBrowser } from './lib/chromium.mjs'
import { axeViolations } from './lib/axe.mjs'
import { REPO, WIDTHS } from './lib/places.mjs'
import { connectMcp, shedCli, shedUnderTest, signIn, textOf } from './lib/shed.mjs'

const shed = shedUnderTest()
const { cli } = shedCli()
const out = process.env.SHOTS || '/tmp/shed-shots'
await mkdir(out, { recursive: true })
const stamp = Date.now().toString(36)
const space = (slug, path = '') => {
  const address = new URL(shed.url)
  address.hostname = `${shed.space}.${address.hostname}`
  address.pathname = `/${slug}/${path}`
  return address.href
}

const browser = await openBrowser()
const page = await browser.context.newPage()
const shoot = async (name) => {
  for (const [width, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size)
    await page.screenshot({ path: join(out, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize(WIDTHS.desktop)
  const violations = await axeViolations(page).catch((err) => [`axe did not run: ${err.message}`])
  console.log(`${name}: ${page.url()}${violations.length ? `\n  ${violations.join('\n  ')}` : ' — axe: no violations'}`)
}

try {
  // A spent sign-in link: used once, then opened again.
  const link = await cli(['login', 'you', '--public-url', shed.url])
  await signIn(page, link)
  await page.goto(link)
  await shoot('sign-in-spent')

  await page.goto(`${shed.url}/no/such/page`)
  await shoot('not-found')

  // The run club: a few runs from its own form, then the board.
  await page.goto(shed.appUrl)
  for (const [who, miles] of [['Ada Lovelace', '5.2'], ['Grace Hopper', '3'], ['Ada Lovelace', '2.5'], ['Katherine Johnson-Goble, the long name', '12']]) {
    await page.getByLabel('Who ran').fill(who)
    await page.getByLabel('Miles').fill(miles)
    await page.getByRole('button', { name: 'Log run' }).click()
    await page.locator('#runs li', { hasText: who }).first().waitFor()
  }
  await shoot('run-club')

  // The reading list, deployed as the guide deploys it.
  const reading = `reading-${stamp}`
  await cli(['deploy', join(REPO, 'examples', 'reading-list'), '--to', `${shed.space}/${reading}`, '--as', 'you', '--title', 'Reading list'])
  await page.goto(space(reading))
  await page.getByLabel('Title').fill('Dune')
  await page.getByLabel('Author').fill('Frank Herbert')
  await page.getByLabel('Pages').fill('412')
  await page.getByRole('button', { name: 'Add the book' }).click()
  await page.locator('#books li', { hasText: 'Dune' }).waitFor()
  await shoot('reading-list')

  await page.goto(`${shed.url}/spaces/${shed.space}/apps/${shed.app}/data?kind=jog`)
  await shoot('data')

  // Activity with an undone row: a run logged by an agent, undone here.
  const agent = await connectMcp(shed)
  const logged = await agent.callTool({
    name: 'command',
    arguments: { name: 'log_run', app: `${shed.space}/${shed.app}`, args: { who: 'Agent run', miles: 1, at: 'now' } },
  })
  if (logged.isError) throw new Error(textOf(logged))
  await agent.close()
  await page.goto(`${shed.url}/spaces/${shed.space}/apps/${shed.app}/activity`)
  await page.getByRole('button', { name: /^Undo / }).first().click()
  await page.waitForLoadState('networkidle')
  await shoot('activity-undone')

  // Tokens: one made on home, shown once in its notice.
  await page.goto(`${shed.url}/`)
  await page.getByLabel('Token name').fill(`laptop ${stamp}`)
  await page.getByRole('button', { name: 'Make a token' }).click()
  await page.waitForLoadState('networkidle')
  await shoot('account-token-made')

  // An app in the trash: its page's notice, then its own address.
  const trashed = `trashed-${stamp}`
  await cli(['deploy', join(REPO, 'examples', 'reading-list'), '--to', `${shed.space}/${trashed}`, '--as', 'you', '--title', 'Old list'])
  await page.goto(`${shed.url}/spaces/${shed.space}/apps/${trashed}`)
  await page.getByRole('button', { name: 'Trash', exact: true }).click()
  await page.waitForLoadState('networkidle')
  await shoot('app-trashed')
  await page.goto(space(trashed))
  await shoot('trashed-address')

  // The consent page an MCP client's sign-in opens.
  const redirect = 'http://127.0.0.1:9/callback'
  const registered = await (
    await fetch(`${shed.url}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Screenshot client', redirect_uris: [redirect], token_endpoint_auth_method: 'none' }),
    })
  ).json()
  const verifier = randomBytes(32).toString('base64url')
  const ask = new URL(`${shed.url}/oauth/authorize`)
  for (const [key, value] of Object.entries({
    response_type: 'code',
    client_id: registered.client_id,
    redirect_uri: redirect,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: `${shed.url}/mcp`,
    state: stamp,
  })) ask.searchParams.set(key, value)
  await page.goto(ask.href)
  await shoot('consent')
} finally {
  await browser.close()
}
