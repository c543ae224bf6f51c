/**
 * The dashboard's latency columns in a real headless Chromium, on a registry with a manual
 * clock, served below a base path and opened at its address with a trailing slash: p50 and
 * p99 are those of the last minute, so they rise during an outage of slow calls and fall back
 * once fast calls follow, while the figures since the start stay in the cell's tooltip.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type CircuitBreaker, pipeline, Registry } from '../../src/index.js';
import {
  createObservabilityHandler,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { type Served, serve } from './support.js';

/** The page updates every 100 ms; a busy machine gets some slack. */
const POLL = { timeout: 5000, interval: 50 };

let clock: ManualClock;
let registry: Registry;
let breaker: CircuitBreaker;
let handler: ObservabilityHandler;
let served: Served;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/**
 * `calls` calls of `ms` each on the manual clock, one a second at most, the breaker read after each
 * as a dashboard reads it. Synchronous: the page's stream sees only the end of the phase.
 */
function phase(calls: number, ms: number): void {
  const p = pipeline(breaker);
  for (let i = 0; i < calls; i++) {
    p.executeSync(() => clock.advance(ms));
    clock.advance(Math.max(0, 1_000 - ms));
    breaker.stats();
  }
}

/** The text of a latency cell as ms ('2003 ms', '5.0 ms', '2.3 s'), NaN for a dash. */
async function cellMs(column: 'p50' | 'p99'): Promise<number> {
  const text = (await page.textContent(`#rows tr[data-name="payments"] td.${column}`)) ?? '';
  const m = /^([\d.]+) (ms|s)$/.exec(text);
  return m === null ? Number.NaN : Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

beforeAll(async () => {
  clock = new ManualClock();
  registry = new Registry(
    { circuitBreakers: { payments: { metrics: { latency: 1 }, slowCallDuration: '1h' } } },
    { clock },
  );
  breaker = registry.circuitBreaker('payments');
  handler = createObservabilityHandler(registry, { basePath: '/ops/', interval: 100 });
  served = await serve((req, res) => handler(req, res));
  browser = await launchChromium();
  page = await browser.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  handler?.close();
  await served?.close();
  registry?.dispose();
});

describeWithChromium('the dashboard latency in Chromium', () => {
  it('goes live at its address with a trailing slash below a base path given with one', async () => {
    const response = await page.goto(`${served.url}/ops/dashboard/`);
    expect(response?.status()).toBe(200);
    await page.waitForSelector('#status[data-live="true"]', { timeout: 5000 });
    await page.waitForSelector('#rows tr[data-name="payments"]', { timeout: 5000 });
    expect(pageErrors).toEqual([]);
  });

  it('shows p50 and p99 of the last minute: up during slow calls, back down after, the lifetime figure in the tooltip', async () => {
    phase(90, 5);
    await expect.poll(() => cellMs('p99'), POLL).toBeLessThan(6);
    expect(await page.textContent('#instances th.num:nth-of-type(7)')).toMatch(/p50 last min/);

    phase(30, 2_000);
    await expect.poll(() => cellMs('p99'), POLL).toBeGreaterThan(1_900);
    expect(await cellMs('p50')).toBeGreaterThan(1_900);

    phase(90, 5);
    await expect.poll(() => cellMs('p99'), POLL).toBeLessThan(6);
    expect(await cellMs('p50')).toBeLessThan(6);
    const title = await page.getAttribute('#rows tr[data-name="payments"] td.p99', 'title');
    // The window in words, the calls in it, and the lifetime p99 (which still holds the outage).
    expect(title).toMatch(
      /^p99 last 1 min \d+ s \(\d+ calls timed\); since the start: (19|20)\d\d ms$/,
    );
    expect(pageErrors).toEqual([]);
  });

  it('shows a dash while no call was timed in the last minute', async () => {
    // A reading notes the counts; a minute later, no call has been timed since.
    clock.advance(120_000);
    breaker.stats();
    clock.advance(61_000);
    await expect
      .poll(() => page.textContent('#rows tr[data-name="payments"] td.p99'), POLL)
      .toBe('\u2013');
  });
});
