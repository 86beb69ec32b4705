// axe-core (the npm package) run in a page: its rules, best practices
// included, over the page as it is drawn now.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
let source

/**
 * Every axe-core violation on `page`, each as one line: the rule, what it
 * says, and the first elements it found (`[]` when the page passes). axe's
 * script is evaluated through the browser's devtools protocol, so a page's
 * Content-Security-Policy does not stop it.
 */
export async function axeViolations(page) {
  source ??= await readFile(require.resolve('axe-core/axe.min.js'), 'utf8')
  await page.evaluate(source)
  const violations = await page.evaluate(async () => (await globalThis.axe.run(document)).violations)
  return violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`,
  )
}
