// Serves the MCP Apps host page (host/host.html and its esbuild bundle) from a
// local HTTP server, plus any extra routes a test adds (the self-checks use
// them to stand in for shed's app address).
import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'
import { BROWSER_TESTS } from './places.mjs'

/** Bundles host/host.js (bare imports of the ext-apps package) into .bundle/host.js. */
export async function bundleHost() {
  const outfile = join(BROWSER_TESTS, '.bundle', 'host.js')
  await build({
    entryPoints: [join(BROWSER_TESTS, 'host', 'host.js')],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    outfile,
    logLevel: 'warning',
  })
  return outfile
}

/**
 * Starts the server on a free loopback port. `routes` maps "METHOD /path" to
 * `async (request, body) => ({ status, type, body })`. Resolves to
 * `{ port, origin, hostUrl, close() }`.
 */
export async function serveHostPage(routes = {}) {
  const bundle = await readFile(await bundleHost())
  const page = await readFile(join(BROWSER_TESTS, 'host', 'host.html'))
  const files = {
    'GET /host.html': async () => ({ status: 200, type: 'text/html; charset=utf-8', body: page }),
    'GET /host.js': async () => ({ status: 200, type: 'text/javascript; charset=utf-8', body: bundle }),
    ...routes,
  }
  const server = createServer(async (request, response) => {
    const url = new URL(request.url, 'http://placeholder')
    const route = files[`${request.method} ${url.pathname}`]
    const chunks = []
    for await (const chunk of request) chunks.push(chunk)
    const answer = route
      ? await route(request, Buffer.concat(chunks).toString('utf8'), url)
      : { status: 404, type: 'text/plain', body: `no ${url.pathname} here` }
    response.writeHead(answer.status, { 'content-type': answer.type, 'cache-control': 'no-store' })
    response.end(answer.body)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  const origin = `http://127.0.0.1:${port}`
  return {
    port,
    origin,
    hostUrl: `${origin}/host.html`,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}
