// shed's page api, served to every app page at /_shed/app.js.
//
// A page of an app calls three globals:
//   apply(bundle)      writes: POSTs the bundle as JSON to the app's ./api/apply
//   query(filterLine)  reads:  GETs the app's ./api/query?<filterLine>
//   watch(filterLine, onChange)
//                      live:   opens the app's ./api/watch?filter=<filterLine>
//                      (Server-Sent Events) and calls onChange(change) for
//                      each write whose entities the line reads; returns a
//                      function that stops watching.
// apply and query resolve to the JSON the server answered (`{entities, aliases}` for an
// apply, `{rows, next?}` for a query) and rejects with an Error whose message
// is the server's own sentence when it refuses (a 4xx/5xx with a JSON body
// `{"error": "<sentence>"}`), so a page can show `err.message` as it is.
//
// Addresses are relative to the app: the web door gives every page a
// <base href> at the app's own address, so they resolve against
// document.baseURI. Requests carry the page's session cookie (same origin).
(function () {
  'use strict'

  /** The app's own `./api/<what>` address. */
  function shedAddress(what) {
    return new URL('./api/' + what, document.baseURI)
  }

  /** The answer's JSON, or an Error carrying the server's sentence. */
  async function shedAnswer(response) {
    const text = await response.text()
    let body
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch (_) {
      body = undefined // not JSON: say so below with the status
    }
    if (!response.ok) {
      const sentence =
        body && typeof body.error === 'string'
          ? body.error
          : 'the server refused with ' + response.status + ' ' + response.statusText
      throw new Error(sentence)
    }
    if (body === undefined) {
      throw new Error('the server answered ' + response.url + ' with something that is not JSON')
    }
    return body
  }

  /** fetch, with a sentence naming the address when the server cannot be reached. */
  async function shedFetch(address, init) {
    let response
    try {
      response = await fetch(address, Object.assign({ credentials: 'same-origin' }, init))
    } catch (err) {
      throw new Error('could not reach ' + address + ': ' + err.message)
    }
    return shedAnswer(response)
  }

  /** Writes a bundle (`{entity, <component>: {...}}`, or a list of them) to this app. */
  async function apply(bundle) {
    if (bundle === null || typeof bundle !== 'object') {
      throw new Error('apply needs a bundle: an object such as {entity: {eid: "$run"}, jog: {who: "Ada"}}')
    }
    return shedFetch(shedAddress('apply'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(bundle),
    })
  }

  /** Reads this app's rows matching a filter line such as `.jog!&miles>=5`. */
  async function query(filterLine) {
    if (typeof filterLine !== 'string') {
      throw new Error('query needs a filter line as text, such as ".jog!&.created!"')
    }
    // The filter line already is a query string: append it as written, unencoded.
    const address = shedAddress('query')
    return shedFetch(filterLine === '' ? address : address.href + '?' + filterLine, { method: 'GET' })
  }

  /**
   * Watches this app's writes that `filterLine` reads, calling `onChange`
   * with one change at a time:
   *   {kind: 'write', version, at, entities, rows, by?, via?, job?, door?, command?}
   *     a write: `rows` are its entities as query(filterLine) reads them
   *     (who and how only to the app's space, as its activity shows them);
   *   {kind: 'reload', version}
   *     what was missed cannot be replayed: read the page afresh;
   *   {kind: 'closed', error}
   *     the stream ended for good — `error` is the server's sentence (the
   *     app is out of reach now) — and watching stopped.
   * The browser reconnects by itself after a dropped connection, and the
   * server replays the writes missed since the last one seen
   * (Last-Event-ID). Answers a function that stops watching.
   */
  function watch(filterLine, onChange) {
    if (typeof filterLine !== 'string') {
      throw new Error('watch needs a filter line as text, such as ".jog!&.created!"')
    }
    if (typeof onChange !== 'function') {
      throw new Error('watch needs a function to call with each change, such as (change) => show()')
    }
    const address = shedAddress('watch')
    address.search = '?filter=' + encodeURIComponent(filterLine)
    let source = null
    let stopped = false
    let retry = 1000
    const said = (kind, event) => onChange(Object.assign({ kind: kind }, JSON.parse(event.data)))
    const stop = () => {
      stopped = true
      if (source) source.close()
    }
    const open = (afresh) => {
      source = new EventSource(address.href)
      if (afresh) {
        // A new EventSource cannot say what it saw last: read afresh.
        source.addEventListener('open', () => onChange({ kind: 'reload' }), { once: true })
      }
      source.addEventListener('write', (event) => {
        retry = 1000
        said('write', event)
      })
      source.addEventListener('reload', (event) => said('reload', event))
      source.addEventListener('closed', (event) => {
        stop()
        said('closed', event)
      })
      source.addEventListener('error', () => {
        // CONNECTING: the browser is reconnecting by itself. CLOSED: it gave
        // up (the server was away, or refused): try again, slower each time.
        if (stopped || source.readyState !== EventSource.CLOSED) return
        setTimeout(() => {
          if (!stopped) open(true)
        }, retry)
        retry = Math.min(retry * 2, 30000)
      })
    }
    open(false)
    return stop
  }

  // The three globals a page calls; the helpers above stay private.
  globalThis.apply = apply
  globalThis.query = query
  globalThis.watch = watch
})()
