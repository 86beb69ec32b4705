// Passkeys (crates/shed-web/src/passkeys.rs, static/passkeys.js), in chromium
// against a real `shed up`, with a CDP virtual authenticator standing in for
// the device: sign in by link; on the account page, a nameless passkey is
// refused with a sentence, then one is added and listed; its finish sent
// again, or from another origin, is refused and keeps nothing; sign out;
// sign in with the passkey on the sign-in page, through the space hosts as a
// link does, and land signed in; sign out; open an MCP client's consent page
// signed out, sign in with the passkey there and land back on the consent; a
// copy of the authenticator whose counter went back is refused; remove the
// passkey and see a passkey sign-in refused with a sentence. A person of its
// own (a viewer of demo) keeps its sign-outs from the other tests. The account
// page with a passkey and the sign-in page are screenshotted at 1280 and
// 390 px wide under test-artifacts/pages/.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { openBrowser } from './lib/chromium.mjs'
import { screenshots } from './lib/places.mjs'
import { shedCli, shedUnderTest, signIn } from './lib/shed.mjs'
import { until } from './lib/wait.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data
    ? false
    : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

const REDIRECT = 'http://127.0.0.1:4321/callback'
// A person of this test's own, a viewer of demo: signing out ends every
// session and unused link of theirs, which the other tests' person keeps.
const HANDLE = `key${Date.now().toString(36)}`

let browser

/** The sentence the passkeys' script shows, once it shows one. */
const passkeySaid = (page) =>
  until('the passkey sentence', async () => {
    const said = page.locator('#passkey-said')
    return (await said.isVisible()) && (await said.innerText())
  })

/** Presses "Sign out" in the header and waits for the signed-out front page. */
async function signOut(page) {
  await Promise.all([
    page.waitForURL(`${shed.url}/`),
    page.locator('header').getByRole('button', { name: 'Sign out' }).click(),
  ])
  assert.ok(await page.getByRole('button', { name: 'Sign in with a passkey' }).isVisible())
}

/**
 * Presses "Sign in with a passkey" and waits to land on `path` once it shows
 * `landed` (a locator): the page pressed may be at that path already.
 */
async function signInWithPasskey(page, path, landed) {
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  await landed.waitFor({ timeout: 15_000 })
  assert.equal(new URL(page.url()).pathname, path)
}

/** An MCP client's authorization URL, for a client registered now. */
async function authorizationUrl(page) {
  const registered = await page.request.post(`${shed.url}/oauth/register`, {
    data: { client_name: 'Passkey test client', redirect_uris: [REDIRECT] },
  })
  assert.equal(registered.status(), 201, await registered.text())
  const { client_id: client } = await registered.json()
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const url = new URL('/oauth/authorize', shed.url)
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: client,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${shed.url}/mcp`,
    state: 'passkeys',
  })) {
    url.searchParams.set(name, value)
  }
  return url.href
}

before(async () => {
  if (skip) return
  browser = await openBrowser()
  await cli(['person', 'add', HANDLE, '--name', 'Kay'])
  await cli(['member', 'add', shed.space, HANDLE, '--role', 'viewer'])
})

after(async () => {
  await browser?.close()
})

test('a passkey added after a link sign-in signs in on the sign-in and consent pages, until removed', { skip }, async () => {
  const page = await browser.context.newPage()
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  })
  assert.match(await signIn(page, await cli(['login', HANDLE, '--public-url', shed.url])), /^You are signed in as /)

  // A passkey needs a name: the host's sentence, and nothing on the device.
  await page.goto(`${shed.url}/account`)
  assert.match(await page.locator('#passkeys').innerText(), /No passkeys yet/)
  await page.getByRole('button', { name: 'Add a passkey' }).click()
  assert.match(await passkeySaid(page), /^a passkey needs a name/)
  const kept = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
  assert.equal(kept.credentials.length, 0)
  const tooLong = await page.evaluate(async () => {
    const answer = await fetch('/_shed/passkeys/add/start', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(61) }),
    })
    return { status: answer.status, ...(await answer.json()) }
  })
  assert.equal(tooLong.status, 400)
  assert.match(tooLong.error, /^a passkey's name is at most 60 characters, and this one has 61/)

  // Added with the device: listed by its name.
  let finish
  page.on('request', (request) => {
    if (request.url().endsWith('/_shed/passkeys/add/finish')) finish = request.postData()
  })
  await page.getByLabel('Passkey name').fill('laptop')
  await Promise.all([
    page.waitForURL(`${shed.url}/account`),
    page.getByRole('button', { name: 'Add a passkey' }).click(),
  ])
  const listed = page.locator('#passkeys li', { hasText: 'laptop' })
  await listed.waitFor()
  assert.match(await listed.innerText(), /added \d{4}-\d\d-\d\d \d\d:\d\d UTC · last used never/)
  assert.equal((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length, 1)
  await screenshots(page, 'account-passkey')

  // The same finish again: its ceremony is spent. From another origin: 403.
  assert.ok(finish, 'the script posted the finish')
  const again = await page.request.post(`${shed.url}/_shed/passkeys/add/finish`, {
    headers: { Origin: shed.url, 'Content-Type': 'application/json' },
    data: finish,
  })
  assert.equal(again.status(), 400)
  assert.match((await again.json()).error, /^this passkey step was finished already/)
  const elsewhere = await page.request.post(`${shed.url}/_shed/passkeys/add/finish`, {
    headers: { Origin: 'http://evil.localhost:1', 'Content-Type': 'application/json' },
    data: finish,
  })
  assert.equal(elsewhere.status(), 403)
  assert.match((await elsewhere.json()).error, /taken only from shed's own pages .* nothing was kept/)
  await page.goto(`${shed.url}/account`)
  assert.equal(await page.locator('#passkeys li').count(), 1)

  // Signed out, then in with the passkey: the front page greets the person,
  // and the space hosts know them too, as after a link.
  await signOut(page)
  await screenshots(page, 'sign-in')
  await signInWithPasskey(page, '/', page.locator('header .who'))
  assert.match(await page.locator('main p').first().innerText(), new RegExp(`^You are signed in as Kay \\(@${HANDLE}\\)`))
  const app = await page.goto(shed.appUrl)
  assert.equal(app.status(), 200, 'the space host took the passkey sign-in too')
  await page.goto(`${shed.url}/account`)
  assert.doesNotMatch(await listed.innerText(), /last used never/)

  // An MCP client's consent page, signed out: the passkey signs in there
  // and the browser comes back to the consent.
  await signOut(page)
  const consent = await authorizationUrl(page)
  await page.goto(consent)
  assert.match(await page.locator('body').innerText(), /Passkey test client.* asks to use shed as you/s)
  await screenshots(page, 'consent-signed-out')
  await signInWithPasskey(page, '/oauth/authorize', page.getByRole('button', { name: 'Allow' }))
  assert.match(await page.locator('body').innerText(), /asks to use shed's MCP server as you/)
  assert.ok(await page.getByRole('button', { name: 'Allow' }).isVisible())
  await screenshots(page, 'consent')

  // A copy of the authenticator as it was before its last use: its counter
  // goes back, and the sign-in is refused.
  await page.goto(`${shed.url}/account`)
  await signOut(page)
  const [credential] = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials
  assert.ok(credential.signCount > 0, `the authenticator counts its uses (${credential.signCount})`)
  await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credential.credentialId })
  await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credential, signCount: 0 } })
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  assert.match(await passkeySaid(page), /^the passkey laptop counted backwards, as a copied authenticator does/)
  assert.equal(page.url(), `${shed.url}/`)

  // Removed on the account page (signed in by link): the device's passkey
  // signs nobody in any more.
  await signIn(page, await cli(['login', HANDLE, '--public-url', shed.url]))
  await page.goto(`${shed.url}/account`)
  await listed.getByRole('button', { name: 'Remove laptop' }).click()
  assert.equal(
    await page.locator('main .note').innerText(),
    'Removed the passkey laptop: it signs nobody in any more.',
  )
  assert.match(await page.locator('#passkeys').innerText(), /No passkeys yet/)
  await signOut(page)
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  assert.match(await passkeySaid(page), /^this passkey is not one of this shed's/)
  assert.equal(page.url(), `${shed.url}/`)
})
