// A person's look at shed in headless chromium, from a one-time sign-in
// link: opens the link, presses "Sign in" (landing on the home page), then
// opens `page` and waits until its text holds `words`. Prints one JSON line:
// { greeting, landed, text }. Not a test of its own: tests/test_first_run.py
// runs it with the link and the app's address `shed up` printed.
//
//   node sign-in-and-look.mjs <sign-in link> <page> <words>
import { openBrowser } from './lib/chromium.mjs'
import { signIn } from './lib/shed.mjs'
import { until } from './lib/wait.mjs'

const [link, address, words] = process.argv.slice(2)
if (!link || !address || !words) {
  console.error('usage: node sign-in-and-look.mjs <sign-in link> <page> <words>')
  process.exit(2)
}

const browser = await openBrowser()
try {
  const page = await browser.context.newPage()
  const greeting = await signIn(page, link)
  const landed = page.url()
  await page.goto(address)
  const text = await until(`${address} to show ${words}`, async () => {
    const shown = await page.locator('body').innerText()
    return shown.includes(words) && shown
  })
  console.log(JSON.stringify({ greeting, landed, text }))
} finally {
  await browser.close()
}
