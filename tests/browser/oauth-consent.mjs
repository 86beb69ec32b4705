// The browser step of an MCP client's OAuth sign-in, as a person does it, in
// headless chromium: opens the authorization URL (signed out, the page says
// how to sign in), opens the `shed login` link in the same browser and presses
// its button, comes back to the consent page by itself, and presses Allow or
// Deny. The redirect to the client is caught, never sent. Prints one JSON line:
// { redirect, signedOutPage, consentPage }.
//
//   node oauth-consent.mjs <authorization url> <sign-in link> <redirect uri> <allow|deny> [screenshot.png]
//
// tests/test_oauth.py runs it as the SDK client's redirect handler.
import { openBrowser } from './lib/chromium.mjs'
import { artifact } from './lib/places.mjs'
import { until } from './lib/wait.mjs'

const [authorizationUrl, signInLink, redirectUri, decision, screenshot] = process.argv.slice(2)
if (!authorizationUrl || !signInLink || !redirectUri || !['allow', 'deny'].includes(decision)) {
  console.error('usage: node oauth-consent.mjs <authorization url> <sign-in link> <redirect uri> <allow|deny> [screenshot.png]')
  process.exit(2)
}

const browser = await openBrowser()
try {
  const page = await browser.context.newPage()
  let redirect = null
  await browser.context.route(`${redirectUri}**`, async (route) => {
    redirect = route.request().url()
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back in the client' })
  })

  await page.goto(authorizationUrl)
  const signedOutPage = await page.locator('body').innerText()

  await page.goto(signInLink)
  await Promise.all([
    page.waitForURL((url) => url.pathname === '/oauth/authorize', { timeout: 15000 }),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ])
  const consentPage = await page.locator('body').innerText()
  if (screenshot) await page.screenshot({ path: await artifact(screenshot), fullPage: true })

  await page.getByRole('button', { name: decision === 'allow' ? 'Allow' : 'Deny' }).click()
  await until(`the redirect to ${redirectUri} after pressing ${decision}`, () => redirect)
  console.log(JSON.stringify({ redirect, signedOutPage, consentPage }))
} finally {
  await browser.close()
}
