// Starts Debian's chromium headless through playwright-core, with the flags
// that work on these machines, in a new empty profile that is removed after.
import { mkdtemp, rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // An opaque-origin (sandboxed) iframe in its own process can be captured
  // before its handshake ends in headless mode; keep it in the page's process.
  '--disable-features=IsolateSandboxedIframes',
]

/**
 * A browser context in a fresh profile; `close()` ends the browser and removes
 * the profile. Throws a sentence saying how to install chromium when it is missing.
 */
export async function openBrowser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no browser at ${CHROMIUM} — run tests/browser/install.sh to install Debian's chromium`)
  }
  const profile = await mkdtemp(join(tmpdir(), 'shed-browser-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 480, height: 720 },
  })
  return {
    context,
    async close() {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}
