/**
 * The dashboard in a real headless Chromium, against a real `node:http` server: it loads
 * cleanly under its Content-Security-Policy, shows every instance, renders hostile keys as
 * text, and follows a breaker from closed to open live.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pipeline, Registry } from '../../src/index.js';
import {
  createObservabilityHandler,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { sleep, whileCalling } from '../support/async.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { fail, type Served, serve } from './support.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard/', import.meta.url));
const XSS_KEY = '<img src=x onerror=alert(1)>';
const QUOTE_KEY = 'tenant "a"\nsecond line';
/** The page updates every 100 ms; a busy machine gets some slack. */
const POLL = { timeout: 5000, interval: 50 };

let registry: Registry;
let handler: ObservabilityHandler;
let served: Served;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const pageErrors: string[] = [];
const dialogs: string[] = [];
const requests: string[] = [];

interface Row {
  kind: string;
  name: string;
  key: string | undefined;
  state: string | undefined;
  cells: Record<string, string>;
  points: string | null;
}

/** The few DOM members the checks read (the test is compiled without the DOM library). */
interface RowElement {
  readonly dataset: Record<string, string | undefined>;
  readonly cells: Iterable<{ readonly className: string; readonly textContent: string | null }>;
  querySelector(selector: string): { getAttribute(name: string): string | null } | null;
}
/** A node the sparkline checks read: its attributes, its text and the nodes under it. */
interface TrendNode {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): TrendNode | null;
}
type TrendGlobals = { document: { querySelector(selector: string): TrendNode | null } };
type PageGlobals = { document: { querySelectorAll(selector: string): Iterable<RowElement> } };

function rows(): Promise<Row[]> {
  return page.evaluate(() =>
    [...(globalThis as unknown as PageGlobals).document.querySelectorAll('#rows tr')].map((tr) => ({
      kind: tr.dataset.kind!,
      name: tr.dataset.name!,
      key: tr.dataset.key,
      state: tr.dataset.state,
      cells: Object.fromEntries(
        [...tr.cells].map((td) => [td.className.split(' ')[0]!, td.textContent ?? '']),
      ),
      points: tr.querySelector('polyline')?.getAttribute('points') ?? null,
    })),
  );
}

async function row(kind: string, name: string, key?: string): Promise<Row | undefined> {
  return (await rows()).find((r) => r.kind === kind && r.name === name && r.key === key);
}

beforeAll(async () => {
  registry = new Registry({
    defaults: {
      circuitBreaker: {
        window: { kind: 'consecutive', threshold: 3 },
        breakDuration: '10m',
        metrics: { latency: 1 },
      },
      bulkhead: { metrics: { latency: 1 } },
    },
    bulkheads: { db: { maxConcurrent: 8, maxQueue: 4 } },
    rateLimiters: { search: { limit: 100, period: '1s' } },
  } as never);
  registry.circuitBreaker('payments');
  registry.keyedCircuitBreaker('api', XSS_KEY);
  registry.keyedCircuitBreaker('api', QUOTE_KEY);
  registry.bulkhead('db');
  registry.rateLimiter('search');
  handler = createObservabilityHandler(registry, { interval: 100, title: 'checkout <ops>' });
  served = await serve((req, res) => handler(req, res));

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      consoleErrors.push(`${message.type()}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(`${served.url}/dashboard`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  handler?.close();
  await served?.close();
  registry?.dispose();
});

describeWithChromium('the dashboard in Chromium', () => {
  it('shows every instance of the registry, breakers with their state as text', async () => {
    await page.waitForSelector('#status[data-live="true"]');
    await expect.poll(async () => (await rows()).length, POLL).toBe(5);
    const all = await rows();
    expect(all.map((r) => [r.kind, r.name, r.key]).sort()).toEqual(
      [
        ['bulkhead', 'db', undefined],
        ['circuitBreaker', 'api', QUOTE_KEY],
        ['circuitBreaker', 'api', XSS_KEY],
        ['circuitBreaker', 'payments', undefined],
        ['rateLimiter', 'search', undefined],
      ].sort(),
    );
    const payments = await row('circuitBreaker', 'payments');
    expect(payments?.state).toBe('closed');
    expect(payments?.cells.state).toMatch(/^closed/);
    expect((await row('bulkhead', 'db'))?.cells.detail).toBe('0 / 8 in flight, 0 queued');
    expect(await page.title()).toBe('checkout <ops>');
    expect(await page.textContent('h1')).toBe('checkout <ops>');
  });

  it('renders hostile keys literally as text: no element made from them, no script run', async () => {
    const xss = await row('circuitBreaker', 'api', XSS_KEY);
    expect(xss?.cells.key).toBe(XSS_KEY);
    const quote = await row('circuitBreaker', 'api', QUOTE_KEY);
    expect(quote?.cells.key).toBe(QUOTE_KEY);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('#rows img, #transitions img').count()).toBe(0);
    // The only script is the page's own.
    expect(await page.locator('script').count()).toBe(1);
    expect(dialogs).toEqual([]);
  });

  it('shows call rates, latency and a sparkline from the live counters', async () => {
    const breaker = registry.circuitBreaker('payments');
    const guarded = pipeline(breaker, registry.bulkhead('db'));
    const limiter = registry.rateLimiter('search');
    const call = async () => {
      await guarded.execute(() => sleep(2));
      limiter.tryAcquire();
    };
    // Rates are read while the calls go on: they fall back to 0 once they stop.
    await whileCalling(call, 0, async () => {
      await expect
        .poll(async () => Number((await row('circuitBreaker', 'payments'))?.cells.calls), POLL)
        .toBeGreaterThan(0);
      await expect
        .poll(async () => Number((await row('rateLimiter', 'search'))?.cells.calls), POLL)
        .toBeGreaterThan(0);
      await expect
        .poll(
          async () => (await row('circuitBreaker', 'payments'))?.points?.split(' ').length,
          POLL,
        )
        .toBeGreaterThan(3);
    });
    const payments = await row('circuitBreaker', 'payments');
    expect(payments?.cells.p50).toMatch(/^\d+(\.\d+)? ms$/);
    expect(payments?.cells.p99).toMatch(/^\d+(\.\d+)? ms$/);
    expect((await row('rateLimiter', 'search'))?.cells.detail).toMatch(/available/);
  });

  it('draws each sparkline at 200 × 40 px, captioned with what it plots, its unit, its value now and its peak, and named for screen readers', async () => {
    const trend = page.locator('#rows tr[data-name="payments"] td.trend');
    const svg = trend.locator('svg');
    const box = await svg.boundingBox();
    expect(box?.width).toBe(200);
    expect(box?.height).toBe(40);
    // The page redraws every refresh: read the label, title and caption in one DOM snapshot.
    const drawn = await page.evaluate(() => {
      const cell = (globalThis as unknown as TrendGlobals).document.querySelector(
        '#rows tr[data-name="payments"] td.trend',
      );
      const image = cell?.querySelector('svg');
      return {
        role: image?.getAttribute('role'),
        name: image?.getAttribute('aria-label'),
        title: image?.querySelector('title')?.textContent,
        caption: cell?.querySelector('.caption')?.textContent,
      };
    });
    expect(drawn.role).toBe('img');
    const name = drawn.name;
    expect(name).toMatch(
      /^calls per second over the last \d+(\.\d)? s: now \d+(\.\d)?, peak \d+(\.\d)?$/,
    );
    expect(drawn.title).toBe(name);
    expect(drawn.caption).toMatch(/^calls per second: \d+(\.\d)? \(peak \d+(\.\d)?\)$/);
    // The peak of the calls made a moment ago, above the rate now that they have stopped.
    const peak = Number(/peak (\S+)$/.exec(name!)![1]);
    expect(peak).toBeGreaterThan(0);
    // Another kind's row says what its own line plots.
    expect(
      await page.locator('#rows tr[data-kind="bulkhead"] td.trend .caption').textContent(),
    ).toMatch(/^calls per second: /);
  });

  it('follows a breaker from closed to open and lists the transition', async () => {
    expect(await page.locator('#transitions li').count()).toBe(0);
    await fail(registry, 'payments', 3);
    await page.waitForSelector('#rows tr[data-name="payments"][data-state="open"]', {
      timeout: 5000,
    });
    const payments = await row('circuitBreaker', 'payments');
    expect(payments?.cells.state).toMatch(/^open/);
    const item = page.locator('#transitions li[data-name="payments"][data-to="open"]');
    await expect.poll(() => item.count(), POLL).toBe(1);
    expect(await item.textContent()).toMatch(/payments: closed → open/);
  });

  it('shows the rate of calls the open breaker refuses', async () => {
    const guarded = pipeline(registry.circuitBreaker('payments'));
    await whileCalling(
      () => guarded.tryExecute(() => 'never called'),
      2,
      async () => {
        await expect
          .poll(async () => Number((await row('circuitBreaker', 'payments'))?.cells.rejected), POLL)
          .toBeGreaterThan(0);
      },
    );
  });

  it("lists a keyed breaker's transition with its hostile key as text", async () => {
    await fail(registry, 'api', 3, XSS_KEY);
    await expect
      .poll(async () => (await row('circuitBreaker', 'api', XSS_KEY))?.state, POLL)
      .toBe('open');
    const text = await page
      .locator('#transitions li[data-to="open"] .what')
      .evaluateAll((els) => els.map((e) => e.textContent));
    expect(text).toContain(`api [${XSS_KEY}]`);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('loaded nothing from anywhere but its own server, with no error on the console', async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}instances.png`, fullPage: true });
    expect(requests.length).toBeGreaterThan(0);
    for (const url of requests) {
      expect(url.startsWith(`${served.url}/`) || url.startsWith('data:'), url).toBe(true);
    }
    expect(consoleErrors).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});
