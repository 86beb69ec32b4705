// Hosts an MCP Apps view in the host page (host/host.js) and lets a test look
// at it: the view's frame, the host's record of the handshake, the size
// reports and the forwarded tool calls, and every response the page saw.
import { until } from './wait.mjs'

/**
 * Opens the host page in `context` and frames `resource` (a `resources/read`
 * content item: `{ text, _meta }`; `listedMeta` is the `resources/list`
 * entry's `_meta`, which the item's own overrides) with `toolResult` as the
 * answer. `callTool(params)` answers the view's forwarded `tools/call`.
 */
export async function hostView(context, { hostUrl, resource, listedMeta, toolInput, toolResult, callTool }) {
  const page = await context.newPage()
  const responses = []
  page.on('response', (response) => responses.push({ url: response.url(), status: response.status() }))
  const problems = []
  page.on('pageerror', (err) => problems.push(err.message))
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text())
  })
  await page.exposeFunction('shedToolCall', callTool)
  await page.goto(hostUrl)
  const csp = resource?._meta?.ui?.csp ?? listedMeta?.ui?.csp
  await page.evaluate((args) => window.hostView(args), {
    html: resource.text,
    csp,
    toolInput: toolInput || {},
    toolResult,
  })
  const host = () => page.evaluate(() => window.hostState)
  await until('the view to finish the MCP Apps handshake and take the tool result', async () => {
    const state = await host()
    if (state.errors.length) throw new Error(state.errors.join('; '))
    return state.initialized && state.delivered
  })
  return { page, view: page.frameLocator('#view'), host, responses, problems }
}

/** The texts of the view's board rows. */
export const boardRows = (view) => view.locator('#board li').allInnerTexts()
