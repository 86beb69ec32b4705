// Where things are: the repo, the screenshots, the examples.
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const BROWSER_TESTS = dirname(dirname(fileURLToPath(import.meta.url)))
export const REPO = dirname(dirname(BROWSER_TESTS))
export const RUN_CLUB = join(REPO, 'examples', 'run-club')
export const APP_JS = join(REPO, 'crates', 'shed-web', 'static', 'app.js')

/** The path of a screenshot under the repo's test-artifacts/, creating the folder. */
export async function artifact(name) {
  const dir = join(REPO, 'test-artifacts')
  await mkdir(dir, { recursive: true })
  return join(dir, name)
}

/** The widths every page is screenshotted at: a desktop's and a phone's. */
export const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } }

/**
 * Screenshots of `page` at both widths, `test-artifacts/pages/<name>-<width>.png`;
 * the page is left at the desktop width.
 */
export async function screenshots(page, name) {
  for (const [width, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size)
    await page.screenshot({ path: await artifact(join('pages', `${name}-${width}.png`)), fullPage: true })
  }
  await page.setViewportSize(WIDTHS.desktop)
}
