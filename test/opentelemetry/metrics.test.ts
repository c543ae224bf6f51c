import { DataPointType } from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { collectMetrics, pipeline, Registry } from '../../src/index.js';
import {
  observeBreakwaterMetrics,
  otelAttributeNames,
  otelInstruments,
} from '../../src/opentelemetry/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { SCENARIO_SERIES } from '../prometheus/expected.js';
import { useScenario } from '../prometheus/scenario.js';
import { throwInCallbacks } from '../support/callbackErrors.js';
import { optionsError } from '../support/errors.js';
import { type Metrics, pointCount, pointValue, startMetrics } from './reader.js';

let metrics: Metrics;

beforeEach(() => {
  metrics = startMetrics();
});

afterEach(async () => {
  await metrics.close();
});

// Registered after the hook above, so it runs before it: the scenario ends, then the metrics.
const runScenario = useScenario();

/** The OpenTelemetry attributes of a Prometheus label set (an empty key is left out). */
function otelAttributes(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) {
    if (k === 'key' && v === '') continue;
    out[otelAttributeNames[k] ?? k] = v;
  }
  return out;
}

/** Within the width of a latency bucket (1/16) of `ms`, in seconds. */
function nearMs(value: number, ms: number): void {
  expect(Math.abs(value * 1000 - ms) / ms).toBeLessThanOrEqual(1 / 16);
}

describe('observeBreakwaterMetrics', () => {
  it('reports the exact value of every counter and gauge per attribute set', async () => {
    const scenario = await runScenario();
    observeBreakwaterMetrics(metrics.meter, scenario.registry);
    const collected = await metrics.collect();
    for (const [family, labels, value] of SCENARIO_SERIES) {
      const name = otelInstruments[family]!.name;
      expect(pointValue(collected, name, otelAttributes(labels)), `${name}`).toBe(value);
    }
    expect(
      pointValue(collected, 'breakwater.circuit_breaker.calls', {
        'breakwater.policy.name': 'payments',
        outcome: 'failure',
      }),
    ).toBe(2);
    // Every series above, plus 4 quantiles of the breaker's durations (the bulkhead has none yet).
    expect(pointCount(collected)).toBe(SCENARIO_SERIES.length + 4);
  });

  it('makes counters monotonic sums, current amounts up-down sums, durations a gauge', async () => {
    const scenario = await runScenario();
    await throwInCallbacks();
    observeBreakwaterMetrics(metrics.meter, scenario.registry);
    const collected = await metrics.collect();
    for (const [family, spec] of Object.entries(otelInstruments)) {
      const m = collected.get(spec.name);
      expect(m, spec.name).toBeDefined();
      expect(m!.descriptor.unit).toBe(spec.unit);
      expect(m!.descriptor.description.length).toBeGreaterThan(0);
      if (spec.kind === 'gauge') {
        expect(m!.dataPointType).toBe(DataPointType.GAUGE);
      } else {
        expect(m!.dataPointType).toBe(DataPointType.SUM);
        expect(m!.dataPointType === DataPointType.SUM && m!.isMonotonic).toBe(
          spec.kind === 'counter',
        );
        expect(spec.kind === 'counter').toBe(family.endsWith('_total'));
      }
    }
    expect(otelInstruments.breakwater_circuit_breaker_calls_total).toEqual({
      name: 'breakwater.circuit_breaker.calls',
      kind: 'counter',
      unit: '{call}',
    });
  });

  it('reports duration percentiles in seconds with a quantile attribute', async () => {
    const scenario = await runScenario();
    observeBreakwaterMetrics(metrics.meter, scenario.registry);
    let collected = await metrics.collect();
    const payments = {
      'breakwater.policy.kind': 'circuitBreaker',
      'breakwater.policy.name': 'payments',
    };
    // Calls of 3, 20 and 20 ms.
    nearMs(pointValue(collected, 'breakwater.call.duration', { ...payments, quantile: '0.5' }), 20);
    nearMs(
      pointValue(collected, 'breakwater.call.duration', { ...payments, quantile: '0.999' }),
      20,
    );
    expect(collected.get('breakwater.call.duration')!.descriptor.unit).toBe('s');

    await scenario.finish();
    collected = await metrics.collect();
    const db = { 'breakwater.policy.kind': 'bulkhead', 'breakwater.policy.name': 'db' };
    for (const quantile of ['0.5', '0.9', '0.99', '0.999']) {
      nearMs(pointValue(collected, 'breakwater.call.duration', { ...db, quantile }), 150);
    }
  });

  it('reports the percentiles of all the keys of a keyed name together as key "_all"', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { api: { metrics: { latency: true } } } },
      { clock },
    );
    for (const [key, ms] of [
      ['a', 10],
      ['b', 10],
      ['c', 400],
    ] as const) {
      pipeline(registry.keyedCircuitBreaker('api', key)).executeSync(() => clock.advance(ms));
    }
    observeBreakwaterMetrics(metrics.meter, registry);
    const collected = await metrics.collect();
    const all = {
      'breakwater.policy.kind': 'circuitBreaker',
      'breakwater.policy.name': 'api',
      'breakwater.key': '_all',
    };
    nearMs(pointValue(collected, 'breakwater.call.duration', { ...all, quantile: '0.5' }), 10);
    nearMs(pointValue(collected, 'breakwater.call.duration', { ...all, quantile: '0.99' }), 400);
    registry.dispose();
  });

  it('sums keys beyond maxKeysPerName into key "_other" and keeps hostile keys verbatim', async () => {
    const clock = new ManualClock();
    const registry = new Registry({}, { clock });
    const hostile = 'a"b\\c\nd<img src=x onerror=alert(1)>';
    for (const key of ['k1', 'k2', 'k3', hostile]) {
      pipeline(registry.keyedBulkhead('tenant', key)).executeSync(() => key);
    }
    observeBreakwaterMetrics(metrics.meter, registry, { maxKeysPerName: 1 });
    const collected = await metrics.collect();
    const admitted = (key: string) =>
      pointValue(collected, 'breakwater.bulkhead.admitted', {
        'breakwater.policy.name': 'tenant',
        'breakwater.key': key,
      });
    expect(admitted(hostile)).toBe(1);
    expect(admitted('_other')).toBe(3);
    expect(collected.get('breakwater.bulkhead.admitted')!.dataPoints).toHaveLength(2);
    registry.dispose();
  });

  it('reports instances of kinds the registry did not have when it was observed', async () => {
    const clock = new ManualClock();
    const registry = new Registry({}, { clock });
    observeBreakwaterMetrics(metrics.meter, registry);
    expect(await metrics.collect().then(pointCount)).toBe(0);
    pipeline(registry.bulkhead('late')).executeSync(() => 1);
    await pipeline(registry.retry('later')).tryExecute(() => 1);
    const collected = await metrics.collect();
    expect(
      pointValue(collected, 'breakwater.bulkhead.admitted', { 'breakwater.policy.name': 'late' }),
    ).toBe(1);
    expect(
      pointValue(collected, 'breakwater.retry.retries', { 'breakwater.policy.name': 'later' }),
    ).toBe(0);
    registry.dispose();
  });

  it('reports cumulative counts that grow between collections', async () => {
    const scenario = await runScenario();
    observeBreakwaterMetrics(metrics.meter, scenario.registry);
    const limiter = { 'breakwater.policy.name': 'search', result: 'rejected' };
    expect(pointValue(await metrics.collect(), 'breakwater.rate_limiter.permits', limiter)).toBe(1);
    await pipeline(scenario.registry.rateLimiter('search')).tryExecute(() => 'refused');
    expect(pointValue(await metrics.collect(), 'breakwater.rate_limiter.permits', limiter)).toBe(2);
  });

  it('reads the registry a fixed number of times per collection, not once per instrument', async () => {
    const scenario = await runScenario();
    observeBreakwaterMetrics(metrics.meter, scenario.registry);
    const reads = vi.spyOn(scenario.registry, 'instancesForMetrics');
    await metrics.collect();
    // Once for the counters and gauges, once for the latency histograms behind the percentiles.
    expect(reads).toHaveBeenCalledTimes(2);
    await metrics.collect();
    expect(reads).toHaveBeenCalledTimes(4);
    reads.mockRestore();
  });

  it('stops reading the registry once disposed', async () => {
    const scenario = await runScenario();
    const dispose = observeBreakwaterMetrics(metrics.meter, scenario.registry);
    const limiter = { 'breakwater.policy.name': 'search', result: 'rejected' };
    expect(pointValue(await metrics.collect(), 'breakwater.rate_limiter.permits', limiter)).toBe(1);
    dispose();
    dispose();
    const reads = vi.spyOn(scenario.registry, 'instancesForMetrics');
    await pipeline(scenario.registry.rateLimiter('search')).tryExecute(() => 'refused');
    const after = await metrics.collect();
    expect(reads).not.toHaveBeenCalled();
    // The SDK may repeat the last cumulative value it saw, but never a newer one.
    if (after.has('breakwater.rate_limiter.permits')) {
      expect(pointValue(after, 'breakwater.rate_limiter.permits', limiter)).toBe(1);
    }
  });

  it('throws OptionsError naming the argument or option', () => {
    const registry = new Registry();
    const cases: [() => unknown, string][] = [
      [() => observeBreakwaterMetrics({} as never, registry), 'meter'],
      [() => observeBreakwaterMetrics(metrics.meter, {} as never), 'registry'],
      [
        () => observeBreakwaterMetrics(metrics.meter, registry, { maxKeysPerName: 1.5 }),
        'maxKeysPerName',
      ],
      [() => observeBreakwaterMetrics(metrics.meter, registry, { keys: 1 } as never), 'keys'],
    ];
    for (const [observe, option] of cases) {
      expect(optionsError(observe).option).toBe(option);
    }
  });

  it('has an instrument for every family collectMetrics reports', async () => {
    const scenario = await runScenario();
    const keyed = new Registry({ rateLimiters: { c: { limit: 5 } } }, { clock: scenario.clock });
    pipeline(keyed.keyedCircuitBreaker('a', 'k')).executeSync(() => 1);
    pipeline(keyed.keyedBulkhead('b', 'k')).executeSync(() => 1);
    await pipeline(keyed.keyedRateLimiter('c', 'k')).tryExecute(() => 1);
    await throwInCallbacks();
    const names = new Set(
      [...collectMetrics(scenario.registry), ...collectMetrics(keyed)].map((f) => f.name),
    );
    expect([...names].sort()).toEqual(Object.keys(otelInstruments).sort());
    const otelNames = Object.values(otelInstruments).map((s) => s.name);
    expect(new Set(otelNames).size).toBe(otelNames.length);
    for (const n of otelNames) {
      expect(n).toMatch(/^breakwater(\.[a-z][a-z0-9_]*)+$/);
      expect(n).not.toMatch(/_total$|_seconds$/);
    }
    keyed.dispose();
  });
});
