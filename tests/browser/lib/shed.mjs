// The shed under test, as the environment names it, and an MCP client for its
// door (the official SDK client over Streamable HTTP, with the bearer token).
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'

const run = promisify(execFile)

/**
 * The `shed` binary and the data folder it serves (SHED_BIN, SHED_DATA, set
 * by against-shed.sh), and `cli(args, env)`: `shed <args>` on that folder,
 * its stdout.
 */
export function shedCli(env = process.env) {
  const bin = env.SHED_BIN || ''
  const data = env.SHED_DATA || ''
  const cli = async (args, extra = {}) => {
    const { stdout } = await run(bin, args, { env: { ...process.env, SHED_DATA: data, ...extra } })
    return stdout.trim()
  }
  return { bin, data, cli }
}

/**
 * SHED_URL      the server, e.g. http://localhost:7700 (its MCP door is SHED_URL/mcp)
 * SHED_TOKEN    a bearer token of a member of the space (`shed token create <handle>`)
 * SHED_LOGIN_URL a one-time sign-in link for the web (`shed login <handle>`)
 * SHED_SPACE, SHED_APP  where the run club is deployed (default demo/runs)
 * SHED_APP_URL  the app's web address, when it is not http://<space>.<SHED_URL host>/<app>/
 */
export function shedUnderTest(env = process.env) {
  const space = env.SHED_SPACE || 'demo'
  const app = env.SHED_APP || 'runs'
  const url = env.SHED_URL || ''
  let appUrl = env.SHED_APP_URL || ''
  if (url && !appUrl) {
    const address = new URL(url)
    address.hostname = `${space}.${address.hostname}`
    address.pathname = `/${app}/`
    appUrl = address.href
  }
  return { url, token: env.SHED_TOKEN || '', loginUrl: env.SHED_LOGIN_URL || '', space, app, appUrl }
}

/** A connected MCP client that says it hosts MCP Apps views. */
export async function connectMcp({ url, token }) {
  const client = new Client(
    { name: 'shed-browser-tests', version: '1.0.0' },
    {
      capabilities: {
        extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
      },
    },
  )
  const headers = token ? { Authorization: `Bearer ${token}` } : {}
  const door = new URL('/mcp', url)
  try {
    await client.connect(new StreamableHTTPClientTransport(door, { requestInit: { headers } }))
  } catch (err) {
    throw new Error(`could not open an MCP session at ${door} (is shed serving there?): ${err.message}`)
  }
  return client
}

/** The text of a tool answer, joined. */
export const textOf = (result) =>
  (result.content || [])
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('\n')

/** Runs an app command through the `command` tool; a refusal throws its sentence. */
export async function command(client, name, args = {}) {
  const result = await client.callTool({ name: 'command', arguments: { name, args } })
  if (result.isError) throw new Error(`command ${name} refused: ${textOf(result)}`)
  return result
}

/**
 * Signs a browser page in with a one-time link as a person would: opens it
 * (twice — opening only asks, so it spends nothing), presses "Sign in", and
 * follows the hops through the spaces to the front page. Throws with what
 * went wrong, the browser's console (a policy refusing the form) included.
 */
export async function signIn(page, loginUrl) {
  const said = []
  const listen = (message) => said.push(message.text())
  page.on('console', listen)
  try {
    for (let open = 1; open <= 2; open++) {
      const asked = await page.goto(loginUrl)
      if (!asked?.ok()) throw new Error(`opening the sign-in link answered ${asked?.status()}: ${await asked?.text()}`)
      const question = await page.locator('p').first().innerText()
      if (!question.startsWith('Sign in to shed as ')) throw new Error(`the sign-in link's page asks no question: ${question}`)
    }
    const front = new URL('/', loginUrl).href
    const [landed] = await Promise.all([
      page.waitForNavigation({ url: front, timeout: 10_000 }),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]).catch((err) => {
      throw new Error(`pressing "Sign in" did not end on ${front} (at ${page.url()}; console: ${said.join(' | ')}): ${err.message}`)
    })
    if (!landed?.ok()) throw new Error(`signing in ended on ${landed?.status()}: ${await landed?.text()}`)
    const greeting = await page.locator('p').first().innerText()
    if (!greeting.startsWith('You are signed in as ')) throw new Error(`the front page after signing in says: ${greeting}`)
    return greeting
  } finally {
    page.off('console', listen)
  }
}
