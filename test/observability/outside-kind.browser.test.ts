/**
 * A policy kind defined outside the library (the concurrency cap of test/support), given to a
 * `Registry` with its `kinds` option: `/health` judges its instances by the kind's `health`,
 * and the dashboard, in a real headless Chromium, shows them by the kind's `label`, its
 * `dashboard` row and their states.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pipeline, Registry, type RegistryConfig } from '../../src/index.js';
import {
  createObservabilityHandler,
  type HealthReport,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { whileCalling } from '../support/async.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { concurrencyCapKind } from '../support/concurrencyCapKind.js';
import { type Served, serve } from './support.js';

/** The page updates every 100 ms; a busy machine gets some slack. */
const POLL = { timeout: 5000, interval: 50 };

const CONFIG = {
  defaults: { concurrencyCap: { limit: 2, cooldown: '10m' } },
  concurrencyCaps: { payments: { limit: 1 } },
} as unknown as RegistryConfig;

describe('/health with a kind defined outside the library', () => {
  let clock: ManualClock;
  let registry: Registry;
  let handler: ObservabilityHandler;
  let served: Served;

  beforeEach(async () => {
    clock = new ManualClock();
    registry = new Registry(CONFIG, { clock, kinds: [concurrencyCapKind] });
    handler = createObservabilityHandler(registry, { critical: ['payments'] });
    served = await serve((req, res) => handler(req, res));
  });

  afterEach(async () => {
    handler.close();
    await served.close();
    registry.dispose();
  });

  async function health() {
    const response = await fetch(`${served.url}/health`);
    const body = (await response.json()) as HealthReport;
    return { code: response.status, status: body.status, unavailable: body.unavailable };
  }

  it('lists its instances with their state, and is ok while they are at rest', async () => {
    registry.get(concurrencyCapKind, 'payments');
    registry.getKeyed(concurrencyCapKind, 'search', 'tenant-1');
    expect(await health()).toEqual({ code: 200, status: 'ok', unavailable: [] });
    const body = (await (await fetch(`${served.url}/health`)).json()) as HealthReport;
    expect(body.instances).toEqual([
      {
        kind: 'concurrencyCap',
        name: 'payments',
        state: 'accepting',
        stats: { inFlight: 0, limit: 1, admitted: 0, refused: 0 },
      },
      {
        kind: 'concurrencyCap',
        name: 'search',
        key: 'tenant-1',
        state: 'accepting',
        stats: { inFlight: 0, limit: 2, admitted: 0, refused: 0 },
      },
    ]);
  });

  it("answers 503 while a critical instance is down by its kind's health, and 200 once it is not", async () => {
    registry.get(concurrencyCapKind, 'payments').stop();
    expect(await health()).toEqual({
      code: 503,
      status: 'degraded',
      unavailable: [{ name: 'payments', state: 'stopped' }],
    });
    clock.advance(600_000);
    expect(await health()).toEqual({ code: 200, status: 'ok', unavailable: [] });
  });

  it('answers 503 when one key of a critical keyed name is down, listing it with its key', async () => {
    registry.getKeyed(concurrencyCapKind, 'payments', 'tenant-7').stop();
    expect(await health()).toEqual({
      code: 503,
      status: 'degraded',
      unavailable: [{ name: 'payments', key: 'tenant-7', state: 'stopped' }],
    });
  });

  it('reports degraded but answers 200 while a critical instance is only degraded', async () => {
    let release!: () => void;
    const held = pipeline(registry.get(concurrencyCapKind, 'payments')).execute(
      () => new Promise<void>((resolve) => (release = resolve)),
    );
    // Its one permit is taken: full, which the kind calls degraded.
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });
    release();
    await held;
    expect(await health()).toEqual({ code: 200, status: 'ok', unavailable: [] });
  });

  it("answers /metrics with the kind's own families, named and keyed", async () => {
    const p = pipeline(registry.get(concurrencyCapKind, 'payments'));
    let release!: () => void;
    const held = p.execute(() => new Promise<void>((resolve) => (release = resolve)));
    await p.tryExecute(() => 'refused');
    registry.getKeyed(concurrencyCapKind, 'search', 'tenant-1');
    const text = await (await fetch(`${served.url}/metrics`)).text();
    expect(text).toContain('# TYPE example_concurrency_cap_refused_total counter');
    expect(text).toContain('example_concurrency_cap_refused_total{name="payments",key=""} 1');
    expect(text).toContain('example_concurrency_cap_in_flight{name="payments",key=""} 1');
    expect(text).toContain('example_concurrency_cap_in_flight{name="search",key="tenant-1"} 0');
    release();
    await held;
  });

  it('stays 200 but reports degraded while only a non-critical instance is down', async () => {
    registry.get(concurrencyCapKind, 'search').stop();
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });
  });
});

interface Row {
  kind: string;
  name: string;
  key: string | undefined;
  state: string | undefined;
  cells: Record<string, string>;
}

/** The few DOM members the checks read (the test is compiled without the DOM library). */
interface RowElement {
  readonly dataset: Record<string, string | undefined>;
  readonly cells: Iterable<{ readonly className: string; readonly textContent: string | null }>;
}
type PageGlobals = { document: { querySelectorAll(selector: string): Iterable<RowElement> } };

describeWithChromium('a kind defined outside the library on the dashboard in Chromium', () => {
  let registry: Registry;
  let handler: ObservabilityHandler;
  let served: Served;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];

  async function row(kind: string, name: string, key?: string): Promise<Row | undefined> {
    const rows = await page.evaluate(() =>
      [...(globalThis as unknown as PageGlobals).document.querySelectorAll('#rows tr')].map(
        (tr) => ({
          kind: tr.dataset.kind!,
          name: tr.dataset.name!,
          key: tr.dataset.key,
          state: tr.dataset.state,
          cells: Object.fromEntries(
            [...tr.cells].map((td) => [td.className.split(' ')[0]!, td.textContent ?? '']),
          ),
        }),
      ),
    );
    return rows.find((r) => r.kind === kind && r.name === name && r.key === key);
  }

  beforeAll(async () => {
    registry = new Registry(CONFIG, { kinds: [concurrencyCapKind] });
    registry.circuitBreaker('orders');
    registry.get(concurrencyCapKind, 'payments');
    for (const key of ['a', 'b', 'c']) registry.getKeyed(concurrencyCapKind, 'api', key);
    handler = createObservabilityHandler(registry, { interval: 100, maxKeysPerName: 1 });
    served = await serve((req, res) => handler(req, res));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') {
        consoleErrors.push(`${message.type()}: ${message.text()}`);
      }
    });
    await page.goto(`${served.url}/dashboard`);
    await page.waitForSelector('#status[data-live="true"]');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    handler?.close();
    await served?.close();
    registry?.dispose();
  });

  it("shows its instance by the kind's label, with its state badge and the kind's detail", async () => {
    await expect
      .poll(async () => (await row('concurrencyCap', 'payments'))?.cells.detail, POLL)
      .toBe('0 / 1 at once');
    const payments = await row('concurrencyCap', 'payments');
    expect(payments?.cells.kind).toBe('concurrency cap');
    expect(payments?.state).toBe('accepting');
    // The badge alone: the kind's stats have no time in state.
    expect(payments?.cells.state).toBe('accepting');
    expect(await page.textContent('#summary')).toBe(
      '3 instances; circuit breaker: 1 closed; concurrency cap: 2 accepting',
    );
  });

  it("charts it from its kind's row: a group named by the kind's label, its rates, its levels and its state", async () => {
    const group = page.locator('#groups section[data-kind="concurrencyCap"][data-name="payments"]');
    await expect
      .poll(() => group.locator('figure[data-chart="levels"]:not([hidden])').count(), POLL)
      .toBe(1);
    expect(await group.locator('h3').textContent()).toBe('concurrency cap payments');
    expect(await group.locator('figure[data-chart="levels"] .chart-name').textContent()).toBe(
      'Calls at once',
    );
    expect(
      await group.locator('figure[data-chart="levels"] svg[role="img"]').getAttribute('aria-label'),
    ).toMatch(/^calls at once over the last .+: at once now 0, peak 0; limit now 1, peak 1$/);
    await expect
      .poll(
        () =>
          group.locator('figure[data-chart="state"] svg.plot rect.seg').getAttribute('data-state'),
        POLL,
      )
      .toBe('accepting');
    expect(
      await group
        .locator('figure[data-chart="rates"] path.line')
        .evaluateAll((paths) => paths.map((p) => p.getAttribute('data-series'))),
    ).toEqual(['calls', 'refused']);
  });

  it('names the kind by its label in the keys left out', async () => {
    expect(await page.textContent('#omitted')).toBe(
      '2 more keys of concurrency cap "api" not shown',
    );
  });

  it("shows the rates of the calls the kind's row counts", async () => {
    const payments = registry.get(concurrencyCapKind, 'payments');
    const guarded = pipeline(payments);
    await whileCalling(
      () => guarded.tryExecute(() => 'ok'),
      2,
      async () => {
        await expect
          .poll(async () => Number((await row('concurrencyCap', 'payments'))?.cells.calls), POLL)
          .toBeGreaterThan(0);
        payments.stop();
        await expect
          .poll(async () => Number((await row('concurrencyCap', 'payments'))?.cells.rejected), POLL)
          .toBeGreaterThan(0);
      },
    );
  });

  it('follows its state: the badge and the summary', async () => {
    await page.waitForSelector(
      '#rows tr[data-kind="concurrencyCap"][data-name="payments"][data-state="stopped"]',
      POLL,
    );
    expect((await row('concurrencyCap', 'payments'))?.cells.state).toBe('stopped');
    await expect
      .poll(() => page.textContent('#summary'), POLL)
      .toBe('3 instances; circuit breaker: 1 closed; concurrency cap: 1 accepting, 1 stopped');
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
