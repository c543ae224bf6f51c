import { describe, expect, it } from 'vitest';
import { metricFamiliesOf } from '../../src/exporters/metricFamilies.js';
import { collectMetrics, pipeline, prometheusText, Registry } from '../../src/index.js';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
import { redisBulkheadKind, redisRateLimiterKind } from '../../src/redis/index.js';
import { sharedSignalsKind } from '../../src/redis/shared-breaker/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { useScenario } from '../prometheus/scenario.js';

const scenario = useScenario();

/**
 * The whole /metrics text of a registry with every kind: the scenario's named instances, and
 * keyed breakers, bulkheads and rate limiters with keys shown one by one, summed into `_other`,
 * shelved and evicted. Any change to a metric's name, type, help, labels or value shows here.
 */
describe('the /metrics text of every kind', () => {
  it('stays exactly as recorded', async () => {
    const { registry: named } = await scenario();
    const clock = new ManualClock();
    const registry = new Registry(
      {
        circuitBreakers: {
          hosts: { window: { kind: 'consecutive', threshold: 1 }, metrics: { latency: true } },
        },
        bulkheads: {
          tenants: { maxConcurrent: 2, maxQueue: 2, queue: 'codel' },
          plain: { maxConcurrent: 1 },
        },
        rateLimiters: { api: { limit: 2, period: '1s' } },
        keys: { maxKeys: 4, idleTimeout: '1m' },
      },
      { clock },
    );
    for (let i = 0; i < 6; i++) {
      const key = `h${i}`;
      const p = pipeline(registry.keyedCircuitBreaker('hosts', key));
      p.executeSync(() => clock.advance(i + 1));
      if (i % 2 === 0) {
        try {
          p.executeSync(() => {
            throw new Error('down');
          });
        } catch {}
      }
      await pipeline(registry.keyedBulkhead('tenants', `t${i % 3}`)).tryExecute(() => i);
      await pipeline(registry.keyedBulkhead('plain', `p${i % 2}`)).tryExecute(() => i);
      for (let j = 0; j <= i % 3; j++) registry.keyedRateLimiter('api', `a${i}`).tryAcquire();
      clock.advance(1_000);
    }
    clock.advance(30_000);
    registry.keyedCircuitBreaker('hosts', 'late');
    const options = { maxKeysPerName: 2 };
    const text =
      prometheusText(collectMetrics(named, options)) +
      prometheusText(collectMetrics(registry, options));
    registry.dispose();
    await expect(text).toMatchFileSnapshot('./__golden__/every-kind.prom');
  });
});

describe('the metric families of every kind', () => {
  it('keep their names, types, help, labels, units and OpenTelemetry instruments', async () => {
    const kinds = [...POLICY_KINDS, redisRateLimiterKind, redisBulkheadKind, sharedSignalsKind];
    const families = metricFamiliesOf(kinds);
    await expect(`${JSON.stringify(families, null, 2)}\n`).toMatchFileSnapshot(
      './__golden__/every-kind-families.txt',
    );
  });
});
