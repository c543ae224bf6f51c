import { afterEach, describe, expect, it } from 'vitest';
import {
  callbackErrorsFamily,
  callDurationFamily,
  metricFamiliesOf,
} from '../../src/exporters/metricFamilies.js';
import { collectMetrics, type MetricFamily, pipeline, Registry } from '../../src/index.js';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
import { runScenario, type Scenario } from '../prometheus/scenario.js';
import { throwInCallbacks } from '../support/callbackErrors.js';

/** Every family of the library's kinds. */
const FAMILIES = metricFamiliesOf(POLICY_KINDS);

let scenario: Scenario | undefined;
let keyed: Registry | undefined;

afterEach(async () => {
  await scenario?.finish();
  scenario?.registry.dispose();
  keyed?.dispose();
  scenario = undefined;
  keyed = undefined;
});

/** Every family of every kind: the scenario's named instances and keyed ones summed into _other. */
async function everyFamily(): Promise<MetricFamily[][]> {
  scenario = await runScenario();
  keyed = new Registry(
    { bulkheads: { b: { metrics: { latency: true } } }, rateLimiters: { c: { limit: 5 } } },
    { clock: scenario.clock },
  );
  for (const key of ['k1', 'k2']) {
    pipeline(keyed.keyedCircuitBreaker('a', key)).executeSync(() => 1);
    pipeline(keyed.keyedBulkhead('b', key)).executeSync(() => 1);
    await pipeline(keyed.keyedRateLimiter('c', key)).tryExecute(() => 1);
  }
  await throwInCallbacks();
  return [collectMetrics(scenario.registry), collectMetrics(keyed, { maxKeysPerName: 1 })];
}

describe('the metric families of the kinds', () => {
  it('lists each Prometheus name and each OpenTelemetry name once', () => {
    const names = FAMILIES.map((f) => f.name);
    const otel = FAMILIES.map((f) => f.otel.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(otel).size).toBe(otel.length);
  });

  it('lists the families of each kind, then the shared duration histogram and callback errors', () => {
    expect(FAMILIES).toEqual([
      ...POLICY_KINDS.flatMap((k) => k.metrics?.families ?? []),
      callDurationFamily,
      callbackErrorsFamily,
    ]);
    expect(callDurationFamily.name).toBe('breakwater_call_duration_seconds');
  });

  it('names each family the same way in Prometheus and OpenTelemetry', () => {
    for (const f of FAMILIES) {
      expect(f.otel.name, f.name).toMatch(/^breakwater(\.[a-z][a-z0-9_]*)+$/);
      const suffix = f.type === 'counter' ? '_total' : f.unit === 's' ? '_seconds' : '';
      expect(f.name).toBe(`${f.otel.name.replaceAll('.', '_')}${suffix}`);
      const instrument = { counter: 'counter', gauge: 'upDownCounter', histogram: 'gauge' };
      expect(f.otel.kind, f.name).toBe(instrument[f.type]);
    }
  });

  it('gives the labels every series of collectMetrics writes, in their order', async () => {
    const collections = await everyFamily();
    for (const families of collections) {
      for (const family of families) {
        const d = FAMILIES.find((x) => x.name === family.name);
        expect(d, family.name).toBeDefined();
        expect(family.samples.length).toBeGreaterThan(0);
        for (const s of family.samples)
          expect(Object.keys(s.labels), family.name).toEqual(d!.labels);
      }
    }
    const reported = new Set(collections.flat().map((f) => f.name));
    expect([...reported].sort()).toEqual(FAMILIES.map((f) => f.name).sort());
  });

  it('is the order collectMetrics reports the families in', async () => {
    const [named] = await everyFamily();
    expect(named!.map((f) => f.name)).toEqual(FAMILIES.map((f) => f.name));
  });
});
