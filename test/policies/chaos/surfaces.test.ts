/**
 * A chaos step reaches every surface of the library as the other kinds do: config data (where
 * an experiment is switched on by a reload), the registry, `/health`, `/metrics` and the
 * dashboard; and `/metrics` keeps what it injected apart from the real failures around it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ChaosFaultError,
  circuitBreaker,
  pipeline,
  Registry,
  type RegistryConfig,
} from '../../../src/index.js';
import { createObservabilityHandler, type HealthReport } from '../../../src/observability/index.js';
import { chaosFamilies } from '../../../src/policies/chaos/metrics.js';
import { ManualClock } from '../../../src/testing/index.js';
import { openStream, serve } from '../../observability/support.js';

let registry: Registry | undefined;
afterEach(() => {
  registry?.dispose();
  registry = undefined;
});

/** Draws that pick every other call, from the first. */
function alternating(): () => number {
  let i = 0;
  return () => (i++ % 2 === 0 ? 0 : 0.99);
}

const config: RegistryConfig = {
  defaults: { chaos: { rate: 0.5 } },
  chaosSteps: {
    'db-latency': { strategy: 'latency', latency: '200ms', maxActive: 'Infinity' },
    'api-fault': { strategy: 'fault', enabled: true },
    'api-outcome': { strategy: 'outcome', outcome: { status: 503 }, rate: 1, enabled: true },
  },
};

describe('chaos steps in config data and the registry', () => {
  it('are built from their section over the defaults, by name', () => {
    registry = new Registry(config);
    expect(registry.chaos('db-latency').stats()).toMatchObject({
      strategy: 'latency',
      rate: 0.5,
      enabled: false,
    });
    expect(registry.chaos('db-latency')).toBe(registry.chaos('db-latency'));
    expect(registry.chaos('api-fault').state).toBe('injecting');
    registry.chaos('api-outcome');
    const snapshot = registry.snapshot().instances.find((i) => i.name === 'api-outcome');
    expect(snapshot).toMatchObject({ kind: 'chaos', state: 'injecting' });
  });

  it('answer an outcome given as data', async () => {
    registry = new Registry(config);
    await expect(pipeline(registry.chaos('api-outcome')).execute(() => 'real')).resolves.toEqual({
      status: 503,
    });
  });

  it('switch on by a reload, in the pipelines already built', async () => {
    const clock = new ManualClock();
    registry = new Registry(config, { clock });
    const p = pipeline(registry.chaos('db-latency'));
    await expect(p.execute(() => 'real')).resolves.toBe('real');
    registry.reconfigure({
      ...config,
      chaosSteps: {
        ...config.chaosSteps,
        'db-latency': { strategy: 'latency', rate: 1, enabled: true },
      },
    });
    let settled = false;
    const call = p
      .execute(() => 'real')
      .then((v) => {
        settled = true;
        return v;
      });
    await clock.advanceAsync(999);
    expect(settled).toBe(false);
    await clock.advanceAsync(1);
    await expect(call).resolves.toBe('real');
  });
});

describe('chaos steps on the observability endpoints', () => {
  it('keep injected faults apart from real failures in /metrics, and show on /health and the dashboard', async () => {
    registry = new Registry({}, {});
    const breaker = circuitBreaker({
      name: 'db',
      window: { kind: 'consecutive', threshold: 1_000 },
    });
    registry.register('db', breaker);
    const step = registry.chaos('api-fault');
    step.reconfigure({ rate: 0.5, enabled: true, random: alternating() });
    // The chaos step inside the breaker, next to the call: the breaker counts both.
    const p = pipeline(breaker, step);
    const results = [];
    for (let i = 0; i < 10; i++) {
      // Of the 5 calls let through, 2 fail for real.
      results.push(
        await p.tryExecute(() => (i === 3 || i === 7 ? Promise.reject(new Error('real')) : i)),
      );
    }
    const failures = results.filter((r) => !r.ok).map((r) => (r as { error: unknown }).error);
    expect(failures.filter((e) => e instanceof ChaosFaultError)).toHaveLength(5);
    expect(failures).toHaveLength(7);

    const handler = createObservabilityHandler(registry, { interval: 100 });
    const served = await serve((req, res) => handler(req, res));
    try {
      const metrics = await (await fetch(`${served.url}/metrics`)).text();
      const labels = '{name="api-fault",key=""';
      expect(metrics).toContain(`${chaosFamilies.injections.name}${labels},strategy="fault"} 5`);
      expect(metrics).not.toContain(
        `${chaosFamilies.injections.name}${labels},strategy="latency"}`,
      );
      expect(metrics).toContain(`${chaosFamilies.realFailures.name}${labels}} 2`);
      expect(metrics).toContain(`${chaosFamilies.calls.name}${labels}} 10`);
      expect(metrics).toContain(
        'breakwater_circuit_breaker_calls_total{name="db",key="",outcome="failure"} 7',
      );

      const health = (await (await fetch(`${served.url}/health`)).json()) as HealthReport;
      expect(health.status).toBe('ok');
      expect(health.instances.find((i) => i.name === 'api-fault')).toMatchObject({
        kind: 'chaos',
        state: 'injecting',
      });
      expect(health.unavailable).toEqual([]);

      const stream = await openStream(`${served.url}/events`);
      const frame = JSON.parse((await stream.next('snapshot')).data) as {
        kinds: Record<string, string>;
        instances: { name: string; row?: { detail: string } }[];
      };
      stream.close();
      expect(frame.kinds.chaos).toBe('chaos step');
      expect(frame.instances.find((i) => i.name === 'api-fault')?.row?.detail).toBe(
        'fault at 50.0 %: 5 injected, 0 capped, 0 active, 2 real failures',
      );
    } finally {
      handler.close();
      await served.close();
    }
  });
});
