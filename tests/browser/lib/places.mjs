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
