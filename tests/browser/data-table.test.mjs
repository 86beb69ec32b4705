// The data page's table at a phone's width (crates/shed-web/src/pages/data.rs
// and its style in reply.rs), in chromium against a real `shed up`: a table
// wider than the screen shows that it scrolls sideways — a shadow at the
// edge that has more — and one that fits shows none. Read from the pixels
// of a screenshot, so it is the shadow a person sees.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { openBrowser } from './lib/chromium.mjs'
import { WIDTHS } from './lib/places.mjs'
import { command, connectMcp, shedCli, shedUnderTest, signIn } from './lib/shed.mjs'

const shed = shedUnderTest()
const { bin, data, cli } = shedCli()
const skip =
  shed.url && bin && data ? false : 'SHED_URL, SHED_BIN and SHED_DATA are not set: run tests/browser/against-shed.sh'

let browser

before(async () => {
  if (skip) return
  browser = await openBrowser()
})

after(async () => {
  await browser?.close()
})

/**
 * How dark the strip `width` px wide at the table's `edge` ('left' or
 * 'right') is, inside its border, over the body rows: 255 less the mean of
 * its darkest column's grey (0 for white).
 */
async function edgeShade(page, edge, width = 6) {
  const box = await page.locator('.table').boundingBox()
  const head = await page.locator('.table thead').boundingBox()
  const top = head.y + head.height + 1
  const clip = {
    x: edge === 'left' ? box.x + 1 : box.x + box.width - 1 - width,
    y: top,
    width,
    height: Math.max(1, Math.min(40, box.y + box.height - 1 - top)),
  }
  const png = (await page.screenshot({ clip })).toString('base64')
  const reader = await browser.context.newPage()
  try {
    return await reader.evaluate(async ({ png, edge }) => {
      const image = new Image()
      image.src = `data:image/png;base64,${png}`
      await image.decode()
      const canvas = document.createElement('canvas')
      canvas.width = image.width
      canvas.height = image.height
      const drawn = canvas.getContext('2d')
      drawn.drawImage(image, 0, 0)
      const { data } = drawn.getImageData(0, 0, image.width, image.height)
      // The column nearest the edge, its grey averaged down the strip.
      const x = edge === 'left' ? 0 : image.width - 1
      let sum = 0
      for (let y = 0; y < image.height; y++) {
        const at = (y * image.width + x) * 4
        sum += (data[at] + data[at + 1] + data[at + 2]) / 3
      }
      return 255 - sum / image.height
    }, { png, edge })
  } finally {
    await reader.close()
  }
}

test('the data table shows it scrolls sideways at 390 px, and shows nothing when it fits', { skip }, async () => {
  const mcp = await connectMcp(shed)
  try {
    await command(mcp, 'log_run', { who: 'Ada', miles: 5, at: new Date().toISOString() })
  } finally {
    await mcp.close()
  }
  const page = await browser.context.newPage()
  await signIn(page, await cli(['login', 'you', '--public-url', shed.url]))
  await page.setViewportSize(WIDTHS.phone)
  await page.goto(`${shed.url}/spaces/${shed.space}/apps/${shed.app}/data?kind=jog`)
  const table = page.locator('.table')
  const [scroll, client] = await table.evaluate((t) => [t.scrollWidth, t.clientWidth])
  assert.ok(scroll > client, `the table fits at 390 px (${scroll} ≤ ${client}): nothing to show`)
  const right = await edgeShade(page, 'right')
  assert.ok(right >= 12, `no shadow at the right edge of a table that scrolls that way (shade ${right})`)
  assert.ok((await edgeShade(page, 'left')) < 4, 'a shadow at the left edge before any scrolling')

  // Scrolled to the end: the shadow moves to the left edge.
  await table.evaluate((t) => { t.scrollLeft = t.scrollWidth })
  assert.ok((await edgeShade(page, 'left')) >= 12, 'no shadow at the left edge once scrolled')
  assert.ok((await edgeShade(page, 'right')) < 4, 'a shadow at the right edge with nothing more there')

  await page.setViewportSize(WIDTHS.desktop)
  await page.reload()
  const fits = await table.evaluate((t) => t.scrollWidth <= t.clientWidth)
  if (fits) assert.ok((await edgeShade(page, 'right')) < 4, 'a shadow on a table that fits')
  await page.close()
})
