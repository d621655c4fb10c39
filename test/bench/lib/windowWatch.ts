// The app's window following a dataset's transfer (`bench:dataset --window`), in
// Debian's Chromium against the agent's own UI (`ferry agent --ui`): it counts
// what the window receives over /ui/events and, once the transfer is done, reads
// the window's JS heap after a garbage collection and opens the transfer's
// details, whose first page of files must name the whole count.
import { chromium, type Browser, type Page } from '@playwright/test';

const CHROMIUM = { executablePath: process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] };
const WAIT_MS = 120_000;

export interface WindowFigures {
  heapMiB: number;
  frames: number;
  frameBytes: number;
  largestFrame: number;
  /** The details' first page, as the window says it: "Files 1–200 of 1,000,000", "Page 1 of 5,000". */
  caption: string;
  pager: string;
}

export class WindowWatch {
  private page: Page | undefined;
  private frames = { count: 0, bytes: 0, largest: 0 };

  private constructor(private readonly browser: Browser) {}

  static async launch(): Promise<WindowWatch> {
    return new WindowWatch(await chromium.launch(CHROMIUM));
  }

  /** Opens the app of the agent whose REST API is at `apiUrl` on Transfers (a page opened before is closed: its agent is gone). */
  async open(apiUrl: string): Promise<void> {
    await this.page?.context().close();
    const page = await (await this.browser.newContext({ viewport: { width: 1280, height: 720 } })).newPage();
    page.on('websocket', (ws) => {
      if (!ws.url().includes('/ui/events')) return;
      ws.on('framereceived', ({ payload }) => {
        const bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
        this.frames.count++;
        this.frames.bytes += bytes;
        this.frames.largest = Math.max(this.frames.largest, bytes);
      });
    });
    await page.goto(new URL(apiUrl).origin, { timeout: WAIT_MS });
    await page.getByRole('heading', { name: 'Transfers' }).waitFor({ timeout: WAIT_MS });
    this.page = page;
  }

  /** Once the transfer named `row` ("Upload dataset") is complete: the heap, what came, and its details' first page. */
  async measure(row: string): Promise<WindowFigures> {
    const page = this.page!;
    const line = page.getByRole('row', { name: row }).first();
    await line.getByRole('img', { name: 'Complete' }).waitFor({ timeout: WAIT_MS });
    const cdp = await page.context().newCDPSession(page);
    let heapMiB: number;
    try {
      await cdp.send('HeapProfiler.collectGarbage');
      heapMiB = (await cdp.send('Runtime.getHeapUsage')).usedSize / 2 ** 20;
    } finally {
      await cdp.detach();
    }
    await line.getByRole('button', { name: /^Details of / }).click();
    const caption = page.getByRole('table', { name: /^Files / }).locator('caption');
    await caption.waitFor({ timeout: WAIT_MS });
    const pager = page.getByRole('navigation', { name: 'Pages of files' });
    const figures = { heapMiB, frames: this.frames.count, frameBytes: this.frames.bytes, largestFrame: this.frames.largest, caption: (await caption.textContent()) ?? '', pager: (await pager.textContent()) ?? '' };
    this.frames = { count: 0, bytes: 0, largest: 0 };
    return figures;
  }

  async close(): Promise<void> {
    await this.page?.context().close();
    await this.browser.close();
  }
}
