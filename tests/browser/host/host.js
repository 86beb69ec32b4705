// An MCP Apps host page for the browser tests, hosted by the real
// @modelcontextprotocol/ext-apps host side (AppBridge + PostMessageTransport).
//
// The Node test calls `window.hostView({ html, csp, toolInput, toolResult })`
// after loading this page; the page then does what an MCP Apps host does with a
// UI resource and a tool's answer:
//   - frames the resource's HTML in a sandboxed iframe (`allow-scripts` only,
//     so the view has an opaque origin and no cookies), with the CSP built
//     from the resource's `_meta.ui.csp`;
//   - answers the view's `ui/initialize`, then sends the tool input and the
//     tool result once the view says `ui/notifications/initialized`;
//   - forwards the view's `tools/call` requests to `window.shedToolCall`,
//     which Playwright exposes and which calls shed's MCP door from Node;
//   - records every `ui/notifications/size-changed` and sizes the frame to it.
// What happened is kept in `window.hostState` for the test to wait on.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge'

/** The tools a view may call back through this host; any other is refused. */
const TOOLS_A_VIEW_MAY_CALL = new Set(['command'])

const state = {
  initialized: false,
  delivered: false,
  sizes: [],
  toolCalls: [],
  logs: [],
  errors: [],
}
window.hostState = state

/** The view's CSP, from `_meta.ui.csp`, the way the MCP Apps spec maps it. */
export function contentSecurityPolicy(csp = {}) {
  const list = (domains) => (Array.isArray(domains) ? domains.filter((d) => typeof d === 'string') : [])
  const resources = list(csp.resourceDomains).join(' ')
  const connect = list(csp.connectDomains)
  const frames = list(csp.frameDomains)
  const bases = list(csp.baseUriDomains)
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `connect-src ${connect.length ? connect.join(' ') : "'none'"}`,
    `frame-src ${frames.length ? frames.join(' ') : "'none'"}`,
    `base-uri ${bases.length ? bases.join(' ') : "'self'"}`,
  ]
    .map((directive) => directive.trim())
    .join('; ')
}

/** The HTML with the CSP as its first tag (after a doctype, which must stay first). */
export function withPolicy(html, policy) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', '&quot;')}">`
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html)
  return doctype ? doctype[0] + meta + html.slice(doctype[0].length) : meta + html
}

window.hostView = async ({ html, csp, toolInput, toolResult }) => {
  const iframe = document.createElement('iframe')
  iframe.id = 'view'
  iframe.setAttribute('sandbox', 'allow-scripts')
  iframe.title = 'view'
  document.getElementById('frame').append(iframe)

  const bridge = new AppBridge(
    null,
    { name: 'shed-browser-test-host', version: '1.0.0' },
    { serverTools: {}, logging: {}, openLinks: {} },
    {
      hostContext: {
        theme: 'light',
        displayMode: 'inline',
        platform: 'web',
        containerDimensions: { maxWidth: 420 },
        styles: {
          variables: {
            '--color-background-primary': '#ffffff',
            '--color-text-primary': '#1d1d1b',
          },
        },
      },
    },
  )

  bridge.oncalltool = async (params) => {
    state.toolCalls.push(params)
    if (!TOOLS_A_VIEW_MAY_CALL.has(params.name)) {
      return {
        isError: true,
        content: [{ type: 'text', text: `this host lets a view call only: ${[...TOOLS_A_VIEW_MAY_CALL].join(', ')}` }],
      }
    }
    return window.shedToolCall(params)
  }
  bridge.onsizechange = (size) => {
    state.sizes.push(size)
    if (typeof size.height === 'number' && size.height > 0) iframe.style.height = `${Math.ceil(size.height)}px`
  }
  bridge.onloggingmessage = (message) => state.logs.push(message)
  bridge.onopenlink = async () => ({})
  bridge.oninitialized = async () => {
    state.initialized = true
    try {
      await bridge.sendToolInput({ arguments: toolInput || {} })
      await bridge.sendToolResult(toolResult)
      state.delivered = true
    } catch (err) {
      state.errors.push(String(err))
    }
  }

  // Connect before the view loads, so its first message finds the bridge listening.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow))
  iframe.srcdoc = withPolicy(html, contentSecurityPolicy(csp))
}
