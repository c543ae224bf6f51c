/**
 * A policy kind defined here, outside the library, given to a `Registry` with its `kinds`
 * option: `/health` judges its instances by the kind's `health`, and the dashboard, in a real
 * headless Chromium, shows them by the kind's `label`, `dashboard` row and states.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock/Clock.js';
import { OptionsError } from '../../src/errors/OptionsError.js';
import {
  createObservabilityHandler,
  type HealthReport,
  type ObservabilityHandler,
} from '../../src/http/index.js';
import { Registry } from '../../src/index.js';
import {
  configSchema,
  type OptionsData,
  type PolicyKindDescriptor,
} from '../../src/protocol/kind.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { type Served, serve } from './support.js';

/** The page updates every 100 ms; a busy machine gets some slack. */
const POLL = { timeout: 5000, interval: 50 };

type ValveState = 'open' | 'throttled' | 'shut';

interface ValveOptions {
  readonly limit: number;
  readonly clock: Clock;
}

interface ValveStats {
  readonly passed: number;
  readonly refused: number;
  readonly limit: number;
  readonly timeInState: number;
}

/** The small engine of the kind: lets calls through unless shut, and counts them. */
class Valve {
  state: ValveState = 'open';
  passed = 0;
  refused = 0;
  onChange: ((from: ValveState, to: ValveState) => void) | undefined;
  private since: number;

  constructor(private readonly options: ValveOptions) {
    this.since = options.clock.now();
  }

  pass(): boolean {
    if (this.state === 'shut') {
      this.refused++;
      return false;
    }
    this.passed++;
    return true;
  }

  set(to: ValveState): void {
    const from = this.state;
    this.state = to;
    this.since = this.options.clock.now();
    this.onChange?.(from, to);
  }

  stats(): ValveStats {
    return {
      passed: this.passed,
      refused: this.refused,
      limit: this.options.limit,
      timeInState: this.options.clock.now() - this.since,
    };
  }
}

function resolveValve(data: OptionsData): ValveOptions {
  const limit = data.limit ?? 10;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new OptionsError('limit', limit, 'a positive integer');
  }
  return { limit, clock: data.clock as Clock };
}

const valveKind: PolicyKindDescriptor<Valve, ValveOptions> = {
  name: 'valve',
  label: 'pressure valve',
  section: 'valves',
  is: (value): value is Valve => value instanceof Valve,
  create: (options) => new Valve(options as ValveOptions),
  resolve: resolveValve,
  reconfigure: () => () => {},
  dispose() {},
  view: (valve) => ({ state: valve.state, stats: valve.stats() }),
  config: { schema: configSchema([['limit', 'value']]) },
  attach(valve, name, hooks) {
    valve.onChange = (from, to) => hooks.stateChange(name, undefined, { from, to, reason: 'set' });
  },
  state: (valve) => valve.state,
  restState: 'open',
  health: (state) => (state === 'shut' ? 'down' : state === 'throttled' ? 'degraded' : 'ok'),
  dashboard({ stats }) {
    const s = stats as ValveStats;
    return { calls: s.passed, rejected: s.refused, detail: `${s.passed} passed, limit ${s.limit}` };
  },
};

const CONFIG = { valves: { water: { limit: 5 }, steam: { limit: 7 } } };

describe('/health with a kind defined outside the library', () => {
  let registry: Registry;
  let handler: ObservabilityHandler;
  let served: Served;

  beforeAll(async () => {
    registry = new Registry(CONFIG as never, { kinds: [valveKind] });
    handler = createObservabilityHandler(registry, { critical: ['water'] });
    served = await serve((req, res) => handler(req, res));
  });

  afterAll(async () => {
    handler?.close();
    await served?.close();
    registry?.dispose();
  });

  async function health() {
    const response = await fetch(`${served.url}/health`);
    const body = (await response.json()) as HealthReport;
    return { code: response.status, status: body.status, unavailable: body.unavailable };
  }

  it('lists its instances and is ok while they are at rest', async () => {
    registry.get(valveKind, 'water');
    registry.get(valveKind, 'steam');
    expect(await health()).toEqual({ code: 200, status: 'ok', unavailable: [] });
    const body = (await (await fetch(`${served.url}/health`)).json()) as HealthReport;
    expect(body.instances).toEqual([
      {
        kind: 'valve',
        name: 'water',
        state: 'open',
        stats: { passed: 0, refused: 0, limit: 5, timeInState: expect.any(Number) },
      },
      {
        kind: 'valve',
        name: 'steam',
        state: 'open',
        stats: { passed: 0, refused: 0, limit: 7, timeInState: expect.any(Number) },
      },
    ]);
  });

  it("answers 503 while its critical instance is down by the kind's health", async () => {
    const water = registry.get(valveKind, 'water');
    water.set('shut');
    expect(await health()).toEqual({
      code: 503,
      status: 'degraded',
      unavailable: [{ name: 'water', state: 'shut' }],
    });
    water.set('throttled');
    expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });
    water.set('open');
    expect(await health()).toEqual({ code: 200, status: 'ok', unavailable: [] });
  });

  it('stays 200 but reports degraded while only a non-critical instance is down', async () => {
    const steam = registry.get(valveKind, 'steam');
    steam.set('shut');
    try {
      expect(await health()).toEqual({ code: 200, status: 'degraded', unavailable: [] });
    } finally {
      steam.set('open');
    }
  });
});

interface Row {
  kind: string;
  name: string;
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

  async function row(kind: string, name: string): Promise<Row | undefined> {
    const rows = await page.evaluate(() =>
      [...(globalThis as unknown as PageGlobals).document.querySelectorAll('#rows tr')].map(
        (tr) => ({
          kind: tr.dataset.kind!,
          name: tr.dataset.name!,
          state: tr.dataset.state,
          cells: Object.fromEntries(
            [...tr.cells].map((td) => [td.className.split(' ')[0]!, td.textContent ?? '']),
          ),
        }),
      ),
    );
    return rows.find((r) => r.kind === kind && r.name === name);
  }

  beforeAll(async () => {
    registry = new Registry(CONFIG as never, { kinds: [valveKind] });
    registry.get(valveKind, 'water');
    registry.circuitBreaker('payments');
    handler = createObservabilityHandler(registry, { interval: 100 });
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
      .poll(async () => (await row('valve', 'water'))?.cells.detail, POLL)
      .toBe('0 passed, limit 5');
    const water = await row('valve', 'water');
    expect(water?.cells.kind).toBe('pressure valve');
    expect(water?.state).toBe('open');
    // The badge, then the time in state from the stats.
    expect(water?.cells.state).toMatch(/^openfor \d/);
    expect(await page.textContent('#summary')).toBe(
      '2 instances; circuit breaker: 1 closed; pressure valve: 1 open',
    );
  });

  it("shows the rates of the calls the kind's row counts", async () => {
    const water = registry.get(valveKind, 'water');
    let running = true;
    const load = (async () => {
      while (running) {
        water.pass();
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    try {
      await expect
        .poll(async () => Number((await row('valve', 'water'))?.cells.calls), POLL)
        .toBeGreaterThan(0);
      water.set('shut');
      await expect
        .poll(async () => Number((await row('valve', 'water'))?.cells.rejected), POLL)
        .toBeGreaterThan(0);
    } finally {
      running = false;
      await load;
    }
  });

  it('follows its state changes: the badge, the summary and the transitions', async () => {
    const water = registry.get(valveKind, 'water');
    if (water.state !== 'shut') water.set('shut');
    await page.waitForSelector('#rows tr[data-kind="valve"][data-state="shut"]', POLL);
    expect((await row('valve', 'water'))?.cells.state).toMatch(/^shut/);
    await expect
      .poll(() => page.textContent('#summary'), POLL)
      .toBe('2 instances; circuit breaker: 1 closed; pressure valve: 1 shut');
    const item = page.locator('#transitions li[data-name="water"][data-to="shut"]');
    await expect.poll(() => item.count(), POLL).toBe(1);
    expect(await item.textContent()).toMatch(/water: open → shut \(set\)/);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
