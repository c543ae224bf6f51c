/**
 * Named policies built in code show on `/health`, `/metrics` and the dashboard of a handler
 * made without a registry (it serves `defaultRegistry`), on a real `node:http` server on
 * 127.0.0.1, until nothing references them; unnamed ones never do; and an empty registry
 * says how to make policies show.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { bulkhead, circuitBreaker, defaultRegistry, pipeline, Registry } from '../../src/index.js';
import {
  createObservabilityHandler,
  type HealthReport,
  type ObservabilityHandler,
  type ObservabilityHandlerOptions,
} from '../../src/observability/index.js';
import { macrotask } from '../support/async.js';
import { parsePrometheus } from './prometheus.js';
import { openStream, type Served, serve } from './support.js';

let handler: ObservabilityHandler | undefined;
let served: Served | undefined;

/** Serves a handler of `registry`, or of defaultRegistry with `options` alone. */
async function start(registryOrOptions?: Registry | ObservabilityHandlerOptions): Promise<string> {
  const h =
    registryOrOptions instanceof Registry
      ? createObservabilityHandler(registryOrOptions)
      : createObservabilityHandler(registryOrOptions);
  handler = h;
  served = await serve((req, res) => h(req, res));
  return served.url;
}

afterEach(async () => {
  handler?.close();
  await served?.close();
  handler = undefined;
  served = undefined;
  defaultRegistry.dispose();
  // The policies a test built in code go with it.
  await macrotask();
  collectGarbage();
});

async function health(url: string): Promise<HealthReport> {
  return (await (await fetch(`${url}/health`)).json()) as HealthReport;
}

/** The series of `breakwater_circuit_breaker_state` (one per breaker), as `name:state`. */
async function metricNames(url: string): Promise<string[]> {
  const { samples } = parsePrometheus(await (await fetch(`${url}/metrics`)).text());
  return samples
    .filter((s) => s.name === 'breakwater_circuit_breaker_state' && s.value === 1)
    .map((s) => `${s.labels.name}:${s.labels.state}`);
}

async function dashboardRows(url: string): Promise<{ kind: string; name: string }[]> {
  const stream = await openStream(`${url}/events`);
  try {
    const data = JSON.parse((await stream.next('snapshot')).data) as {
      instances: { kind: string; name: string; row?: object }[];
    };
    return data.instances.map(({ kind, name, row }) => {
      expect(row, `${kind}:${name} has a dashboard row`).toBeDefined();
      return { kind, name };
    });
  } finally {
    stream.close();
  }
}

const listed = (report: HealthReport) => report.instances.map((i) => `${i.kind}:${i.name}`);

/** A full garbage collection, as `--expose-gc` gives. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('a handler made without a registry', () => {
  it('shows a named breaker built in code on /health, /metrics and the dashboard, with its counts', async () => {
    const payments = circuitBreaker({ name: 'payments' });
    await pipeline(payments).execute(() => 'ok');
    const url = await start({ critical: ['payments'] });

    const report = await health(url);
    expect(listed(report)).toEqual(['circuitBreaker:payments']);
    expect(report.instances[0]).toMatchObject({ state: 'closed', stats: { successes: 1 } });
    expect(report.note).toBeUndefined();
    expect(await metricNames(url)).toEqual(['payments:closed']);
    expect(await dashboardRows(url)).toEqual([{ kind: 'circuitBreaker', name: 'payments' }]);

    payments.forceOpen();
    const response = await fetch(`${url}/health`);
    expect(response.status).toBe(503);
    expect(((await response.json()) as HealthReport).unavailable).toEqual([
      { name: 'payments', state: 'forced-open' },
    ]);
    // The dashboard's recent transitions, on the first event of its stream.
    const stream = await openStream(`${url}/events`);
    try {
      const first = JSON.parse((await stream.next('snapshot')).data) as {
        transitions: { name: string; from: string; to: string }[];
      };
      expect(first.transitions).toMatchObject([
        { name: 'payments', from: 'closed', to: 'forced-open' },
      ]);
    } finally {
      stream.close();
    }
  });

  it('never shows a policy built without a name', async () => {
    const anonymous = [circuitBreaker(), bulkhead({ maxConcurrent: 2 })];
    await pipeline(...anonymous).execute(() => 'ok');
    const url = await start();
    expect((await health(url)).instances).toEqual([]);
    expect(await metricNames(url)).toEqual([]);
    expect(await dashboardRows(url)).toEqual([]);
    expect(anonymous).toHaveLength(2);
  });

  it('shows a policy the registry holds once: a name of its own, or one registered by hand, is not listed again as built in code', async () => {
    defaultRegistry.circuitBreaker('orders');
    const sameName = circuitBreaker({ name: 'orders' });
    const registered = circuitBreaker({ name: 'ledger' });
    defaultRegistry.register('ledger-by-hand', registered);
    const other = new Registry();
    const elsewhere = circuitBreaker({ name: 'billing' });
    other.register('billing', elsewhere);
    const url = await start();

    expect(listed(await health(url)).sort()).toEqual([
      'circuitBreaker:ledger-by-hand',
      'circuitBreaker:orders',
    ]);
    expect((await health(url)).instances.length).toBe(defaultRegistry.snapshot().instances.length);
    expect((await metricNames(url)).sort()).toEqual(['ledger-by-hand:closed', 'orders:closed']);
    expect((await dashboardRows(url)).map((r) => r.name).sort()).toEqual([
      'ledger-by-hand',
      'orders',
    ]);
    expect(defaultRegistry.circuitBreaker('orders')).not.toBe(sameName);
  });

  it('drops a named policy once nothing references it and it is collected', async () => {
    const url = await start();
    (() => {
      circuitBreaker({ name: 'short-lived' });
    })();
    let kept: object | undefined = circuitBreaker({ name: 'kept-for-now' });
    expect(listed(await health(url))).toEqual([
      'circuitBreaker:short-lived',
      'circuitBreaker:kept-for-now',
    ]);
    // A weak reference holds its target until the job that made or read it has ended.
    await macrotask();
    collectGarbage();
    expect(listed(await health(url))).toEqual(['circuitBreaker:kept-for-now']);
    expect(kept).toBeDefined();
    kept = undefined;
    await macrotask();
    collectGarbage();
    expect((await health(url)).instances).toEqual([]);
    expect(await metricNames(url)).toEqual([]);
    expect(await dashboardRows(url)).toEqual([]);
  });
});

describe('with nothing to show', () => {
  it('says how to make policies show: a note on /health, a comment on /metrics, a line on the dashboard', async () => {
    const url = await start(new Registry());
    const report = await health(url);
    expect(report.instances).toEqual([]);
    expect(report.note).toMatch(/circuitBreaker\(\{ name: 'payments' \}\)/);

    const metrics = await fetch(`${url}/metrics`);
    const text = await metrics.text();
    expect(text).toMatch(/^# No policies to show yet: .*codeBuilt: true.*\n$/);
    expect(parsePrometheus(text).samples).toEqual([]);

    const page = await (await fetch(`${url}/dashboard`)).text();
    expect(page).toContain(
      '<p id="empty" class="empty">No policies to show yet: give a policy built in code a name, as in circuitBreaker({ name: &#39;payments&#39; })',
    );
  });

  it('leaves the note out once there is an instance', async () => {
    const registry = new Registry();
    registry.bulkhead('db');
    const url = await start(registry);
    expect((await health(url)).note).toBeUndefined();
    expect(await (await fetch(`${url}/metrics`)).text()).not.toMatch(/^# No policies/);
  });
});
