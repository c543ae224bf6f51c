/**
 * The dashboard's charts in a real headless Chromium, through an outage the test drives: a
 * pipeline (retry spending a retry budget, breaker, adaptive limit, bulkhead) behind the
 * handler on loopback, whose dependency is the test's own function. The policies run on a
 * manual clock (the breaker stays open until the test moves it); the page's stream and time axis
 * are real time. The page's charts are read from the SVG it drew, and saved as screenshots
 * under test-artifacts/dashboard/.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pipeline, Registry, type RegistryConfig } from '../../src/index.js';
import {
  createObservabilityHandler,
  type ObservabilityHandler,
} from '../../src/observability/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { sleep, whileCalling } from '../support/async.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { type Served, serve } from './support.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/dashboard/', import.meta.url));
/** The stream sends a snapshot every 200 ms; a stalled machine gets a generous wait. */
const POLL = { timeout: 20_000, interval: 100 };
/**
 * Real time each phase lasts past the change it waits for, so the pictures show it over
 * several snapshots (nothing is asserted about this time).
 */
const HOLD = 3000;

const CONFIG = {
  circuitBreakers: {
    payments: {
      window: { kind: 'consecutive', threshold: 20 },
      breakDuration: '1h',
      metrics: { latency: 1 },
    },
  },
  bulkheads: { db: { maxConcurrent: 4, maxQueue: 8, metrics: { latency: 1 } } },
  adaptiveLimits: { search: { initialLimit: 10 } },
  retryBudgets: { payments: { model: 'tokens', maxTokens: 10 } },
  retries: { payments: { budget: 'payments', maxAttempts: 2, delay: 1, jitter: 'none' } },
} as unknown as RegistryConfig;

let clock: ManualClock;
let ticker: ReturnType<typeof setInterval>;
let registry: Registry;
let handler: ObservabilityHandler;
let served: Served;
let browser: Browser;
let page: Page;
/** Whether the dependency fails: the outage. */
let down = false;
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
const requests: string[] = [];

/** A point of a drawn line: x and its height above the chart's zero line, in px. */
interface Point {
  readonly x: number;
  readonly h: number;
}
/** One chart as the page drew it. */
interface Drawn {
  readonly name: string;
  readonly label: string;
  readonly series: Record<string, Point[]>;
  readonly segments: { state: string; x: number; w: number }[];
  readonly marks: { from: string; to: string; x: number }[];
}

/** The few DOM members the reader uses (the tests compile without the DOM library). */
interface PageNode {
  readonly textContent: string | null;
  readonly dataset: Record<string, string | undefined>;
  readonly hidden: boolean;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageNode | null;
  querySelectorAll(selector: string): Iterable<PageNode>;
}
type Globals = { document: PageNode };

/** The visible charts of the instance `kind`/`name`, by chart (`state`, `rates`, ...). */
function charts(kind: string, name: string): Promise<Record<string, Drawn>> {
  return page.evaluate(
    ([kind, name]) => {
      const group = (globalThis as unknown as Globals).document.querySelector(
        `#groups section[data-kind="${kind}"][data-name="${name}"]`,
      );
      const out: Record<string, Drawn> = {};
      for (const fig of group?.querySelectorAll('figure.chart') ?? []) {
        if (fig.hidden) continue;
        const svg = fig.querySelector('svg.plot')!;
        const zero = Number(svg.querySelector('line.axis')?.getAttribute('y1') ?? Number.NaN);
        const series: Record<string, Point[]> = {};
        for (const path of svg.querySelectorAll('path.line')) {
          if (path.getAttribute('visibility') === 'hidden') continue;
          series[path.dataset.series!] = [
            ...(path.getAttribute('d') ?? '').matchAll(/[ML]([\d.]+),([\d.]+)/g),
          ].map((m) => ({ x: Number(m[1]), h: Math.round((zero - Number(m[2])) * 10) / 10 }));
        }
        out[fig.dataset.chart!] = {
          name: fig.querySelector('.chart-name')?.textContent ?? '',
          label: svg.getAttribute('aria-label') ?? '',
          series,
          segments: [...svg.querySelectorAll('rect.seg')].map((r) => ({
            state: r.dataset.state!,
            x: Number(r.getAttribute('x')),
            w: Number(r.getAttribute('width')),
          })),
          marks: [...svg.querySelectorAll('line.mark')].map((m) => ({
            from: m.dataset.from!,
            to: m.dataset.to!,
            x: Number(m.getAttribute('x1')),
          })),
        };
      }
      return out;
    },
    [kind, name] as const,
  );
}

/** The element with the focus, as the keyboard test reads it. */
interface Focused {
  readonly id: string;
  readonly className: string;
  closest(selector: string): unknown;
}

/** One call through the whole pipeline; the dependency takes 20 ms of the manual clock. */
const guarded = () =>
  pipeline(
    registry.retry('payments'),
    registry.circuitBreaker('payments'),
    registry.adaptiveLimit('search'),
    registry.bulkhead('db'),
  );

async function call(): Promise<void> {
  await guarded().tryExecute(async () => {
    await sleep(2);
    clock.advance(20);
    if (down) throw new Error('dependency down');
    return 'ok';
  });
}

/** Calls from two loops at once while `body` runs. */
const traffic = <T>(body: () => Promise<T>): Promise<T> => whileCalling(call, 10, body, 2);

async function screenshot(file: string, selector?: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  if (selector === undefined) {
    await page.screenshot({ path: `${ARTIFACTS}${file}`, fullPage: true });
  } else {
    await page.locator(selector).screenshot({ path: `${ARTIFACTS}${file}` });
  }
}

beforeAll(async () => {
  clock = new ManualClock();
  // The retries' 1 ms delay waits on the manual clock: move it along in real time too.
  ticker = setInterval(() => clock.advance(1), 5);
  registry = new Registry(CONFIG, { clock });
  guarded();
  handler = createObservabilityHandler(registry, { interval: 200, title: 'outage' });
  served = await serve((req, res) => handler(req, res));
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') {
      consoleErrors.push(`${message.type()}: ${message.text()}`);
    }
  });
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(`${served.url}/dashboard`);
  await page.waitForSelector('#status[data-live="true"]', { timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  clearInterval(ticker);
  await browser?.close();
  handler?.close();
  await served?.close();
  registry?.dispose();
});

describeWithChromium('the dashboard charts through an outage in Chromium', () => {
  it('draws the breaker closed, open, half-open and closed again with each transition marked, and the failures rising then falling', async () => {
    // Healthy: calls and no failures, for a few snapshots.
    await traffic(async () => {
      await expect
        .poll(async () => (await charts('circuitBreaker', 'payments')).rates?.series.calls, POLL)
        .toSatisfy((calls?: Point[]) => (calls ?? []).filter((p) => p.h > 0).length >= 3);
      await sleep(HOLD);
    });
    // The outage: failures until the breaker opens, then its refusals.
    down = true;
    await traffic(async () => {
      await expect
        .poll(async () => (await charts('circuitBreaker', 'payments')).rates?.label, POLL)
        .toMatch(/refused now [1-9]/);
      await sleep(HOLD);
    });
    await screenshot('outage-open.png');
    // The dependency is back; the break ends on the manual clock; a probe closes the breaker.
    down = false;
    clock.advance(3_600_000);
    await traffic(async () => {
      await expect
        .poll(async () => (await charts('circuitBreaker', 'payments')).state?.label, POLL)
        .toMatch(/^State over the last [^:]+: now closed/);
      // Calls flow again for a few snapshots, and the failures are back to zero.
      await expect
        .poll(async () => (await charts('circuitBreaker', 'payments')).rates?.label, POLL)
        .toMatch(/calls now [1-9].*failed now 0/);
      await sleep(HOLD);
    });

    const { state, rates } = await charts('circuitBreaker', 'payments');
    // The band, left to right: closed, open, half-open (a moment, at least 2 px), closed.
    const order = state!.segments.map((s) => s.state);
    expect(order).toEqual(['closed', 'open', 'half-open', 'closed']);
    expect(state!.segments.every((s) => s.w >= 2)).toBe(true);
    const open = state!.segments[1]!;
    expect(open.w).toBeGreaterThan(4);
    expect(state!.marks.map((m) => `${m.from}>${m.to}`)).toEqual([
      'closed>open',
      'open>half-open',
      'half-open>closed',
    ]);
    // Each mark sits where its segment starts.
    for (const [k, mark] of state!.marks.entries()) {
      expect(Math.abs(mark.x - state!.segments[k + 1]!.x)).toBeLessThan(1);
    }
    expect(state!.label).toMatch(/3 transitions: closed → open at .+, open → half-open at .+/);
    expect(state!.label).toMatch(/closed [\d.]+ s, open [\d.]+ s, half-open [\d.]+ s in all$/);

    // Failures: none before the outage, a rise during it, none after (the last point is zero).
    const failed = rates!.series.failed!;
    const rise = failed.findIndex((p) => p.h > 0);
    expect(rise).toBeGreaterThan(0);
    expect(failed[0]!.h).toBe(0);
    expect(failed[failed.length - 1]!.h).toBe(0);
    // The rise ends with the opening: no failure after the second snapshot past its mark (a
    // call let in before it may fail just after it).
    const second = failed.filter((p) => p.x > state!.marks[0]!.x)[1]!;
    expect(failed.filter((p) => p.h > 0 && p.x > second.x)).toEqual([]);
    // Refusals only while it was open (or half-open): none before the first mark.
    const refused = rates!.series.refused!;
    expect(refused.filter((p) => p.x < state!.marks[0]!.x - 1).every((p) => p.h === 0)).toBe(true);
    expect(refused.some((p) => p.h > 0)).toBe(true);
    await screenshot('outage-recovered.png');
    await screenshot(
      'outage-breaker.png',
      '#groups section[data-name="payments"][data-kind="circuitBreaker"]',
    );
  }, 120_000);

  it('charts the limits and calls in flight of the bulkhead and the adaptive limit, and the retry budget balance, which the outage drew down', async () => {
    const db = await charts('bulkhead', 'db');
    expect(db.levels?.name).toBe('Calls in flight');
    expect(Object.keys(db.levels!.series)).toEqual(['in flight', 'limit', 'queued']);
    expect(db.levels!.label).toMatch(/limit now 4, peak 4/);
    expect(db.levels!.series.limit!.length).toBeGreaterThan(3);
    expect(db.latency?.label).toMatch(/p99 now \d/);

    const search = await charts('adaptiveLimit', 'search');
    expect(Object.keys(search.levels!.series)).toEqual(['in flight', 'limit', 'queued']);
    expect(search.levels!.label).toMatch(/in flight now \d+, peak [1-9]/);
    expect(search.levels!.label).toMatch(/limit now [1-9]/);

    const budget = await charts('retryBudget', 'payments');
    expect(budget.levels?.name).toBe('Budget');
    const balance = budget.levels!.series.balance!;
    expect(balance.length).toBeGreaterThan(3);
    // The failed attempts spent tokens: the line dipped below where it started.
    expect(Math.min(...balance.map((p) => p.h))).toBeLessThan(balance[0]!.h);
    expect(budget.rates?.label).toMatch(/extra attempts allowed now/);

    const retry = await charts('retry', 'payments');
    expect(retry.rates?.label).toMatch(/failed now 0\.0, peak [1-9]/);
    await screenshot('outage-limits.png', '#groups');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot('outage-dark.png');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('names every chart for a screen reader: the figure by its caption, its picture by what it shows now', async () => {
    const figures = page.locator('figure.chart:not([hidden])');
    const count = await figures.count();
    expect(count).toBe(11);
    // Accessible names as Chromium computes them, through the roles.
    expect(await page.getByRole('figure').count()).toBe(count);
    expect(
      await page
        .getByRole('figure', { name: /^(State|Per second|Latency|Calls in flight|Budget)/ })
        .count(),
    ).toBe(count);
    const pictures = page.locator('figure.chart:not([hidden]) svg[role="img"]');
    expect(await pictures.count()).toBe(count);
    expect(
      await page
        .getByRole('img', {
          name: /^(State|Per second|Latency|calls in flight|budget) over the last .+: .*now/,
        })
        .count(),
    ).toBe(count);
    for (const label of await pictures.evaluateAll((svgs) =>
      svgs.map((s) => s.querySelector('title')?.textContent === s.getAttribute('aria-label')),
    )) {
      expect(label).toBe(true);
    }
  });

  it('reaches each instance’s chart group and its charts with the Tab key, with a visible focus ring, and leads from the table to the group', async () => {
    const groups = await page
      .locator('#groups section.group')
      .evaluateAll((els) => els.map((e) => e.id));
    expect(groups.length).toBe(5);
    await page
      .locator('#groups section.group')
      .first()
      .evaluate((e) => {
        (e as unknown as { blur(): void }).blur();
      });
    // From the last link of the table, Tab walks the groups, each followed by its charts.
    await page.locator('#rows tr:last-child td.name a').focus();
    const reached: string[] = [];
    let charts = 0;
    for (let k = 0; k < 60; k++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const e = (globalThis as unknown as { document: { activeElement: Focused | null } })
          .document.activeElement;
        return {
          id: e?.id ?? '',
          cls: String(e?.className ?? ''),
          inGroups: e?.closest('#groups') != null,
        };
      });
      if (!focused.inGroups) break;
      if (focused.cls === 'group') reached.push(focused.id);
      if (focused.cls === 'chart') charts++;
    }
    expect(reached).toEqual(groups);
    expect(charts).toBe(11);
    // The focus is drawn: an outline while the keyboard moves it.
    await page.keyboard.press('Shift+Tab');
    const outline = await page.evaluate(() => {
      const d = globalThis as unknown as {
        document: { activeElement: unknown };
        getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string };
      };
      const style = d.getComputedStyle(d.document.activeElement);
      return `${style.outlineStyle} ${style.outlineWidth}`;
    });
    expect(outline).toBe('solid 3px');
    // Enter on an instance's name in the table moves the focus to its charts.
    await page.locator('#rows tr[data-kind="bulkhead"] td.name a').focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() =>
        page.evaluate(
          () =>
            (
              globalThis as unknown as {
                document: { activeElement: { dataset: Record<string, string> } };
              }
            ).document.activeElement.dataset.name,
        ),
      )
      .toBe('db');
  });

  it('loaded nothing from anywhere but its own server, with no error on the console', () => {
    expect(requests.length).toBeGreaterThan(0);
    for (const url of requests) {
      expect(url.startsWith(`${served.url}/`) || url.startsWith('data:'), url).toBe(true);
    }
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
