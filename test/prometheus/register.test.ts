import {
  AggregatorRegistry,
  Counter,
  type OpenMetricsContentType,
  Registry as PromRegistry,
} from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { metricFamiliesOf } from '../../src/exporters/metricFamilies.js';
import {
  circuitBreaker,
  collectMetrics,
  pipeline,
  prometheusText,
  Registry,
  UsageError,
} from '../../src/index.js';
import { POLICY_KINDS } from '../../src/policies/kinds.js';
import { registerBreakwaterMetrics } from '../../src/prometheus/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { throwInCallbacks } from '../support/callbackErrors.js';
import { optionsError } from '../support/errors.js';
import { DEFAULT_BOUNDS, PAYMENTS_BUCKETS, SCENARIO_SERIES } from './expected.js';
import { type ParsedFamily, parsePrometheusText, sampleValue } from './parse.js';
import { useScenario } from './scenario.js';

const DURATION = 'breakwater_call_duration_seconds';
/** Every family of the library's kinds. */
const FAMILIES = metricFamiliesOf(POLICY_KINDS);

const runScenario = useScenario();

async function scrape(prom: PromRegistry): Promise<Map<string, ParsedFamily>> {
  return parsePrometheusText(await prom.metrics());
}

function expectHistogram(
  families: Map<string, ParsedFamily>,
  labels: Record<string, string>,
  buckets: readonly number[],
  count: number,
  sum: number,
): void {
  DEFAULT_BOUNDS.forEach((bound, i) => {
    expect(
      sampleValue(families, DURATION, { ...labels, le: String(bound) }, `${DURATION}_bucket`),
      `bucket le=${bound}`,
    ).toBe(buckets[i]);
  });
  expect(sampleValue(families, DURATION, { ...labels, le: '+Inf' }, `${DURATION}_bucket`)).toBe(
    count,
  );
  expect(sampleValue(families, DURATION, labels, `${DURATION}_count`)).toBe(count);
  expect(sampleValue(families, DURATION, labels, `${DURATION}_sum`)).toBeCloseTo(sum, 9);
}

describe('registerBreakwaterMetrics', () => {
  it('exposes the exact value of every counter and gauge of a known call sequence', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    const families = await scrape(prom);

    for (const [family, labels, value] of SCENARIO_SERIES) {
      expect(sampleValue(families, family, labels), `${family}${JSON.stringify(labels)}`).toBe(
        value,
      );
    }
    const scalarSeries = [...families.values()]
      .filter((f) => f.type !== 'histogram')
      .reduce((n, f) => n + f.samples.length, 0);
    expect(scalarSeries).toBe(SCENARIO_SERIES.length);
  });

  it('types counters as counters, state and sizes as gauges, durations as a histogram', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    const families = await scrape(prom);
    for (const d of FAMILIES) {
      expect(families.get(d.name)?.type, d.name).toBe(d.type);
      expect(d.type === 'counter').toBe(d.name.endsWith('_total'));
    }
    expect(families.get('breakwater_circuit_breaker_calls_total')?.help).toBe(
      'Calls a circuit breaker admitted, by outcome.',
    );
  });

  it('exposes the duration histogram with the same buckets, sum and count', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    let families = await scrape(prom);
    const payments = { kind: 'circuitBreaker', name: 'payments', key: '' };
    const db = { kind: 'bulkhead', name: 'db', key: '' };
    expectHistogram(families, payments, PAYMENTS_BUCKETS, 3, 0.043);
    expectHistogram(families, db, new Array(14).fill(0), 0, 0);

    // Read afresh on each scrape: the two bulkhead calls end after 150 ms.
    await scenario.finish();
    families = await scrape(prom);
    expectHistogram(families, db, [0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2], 2, 0.3);
    expect(sampleValue(families, 'breakwater_bulkhead_in_flight', { name: 'db', key: '' })).toBe(0);
  });

  it('shows the same series as the core prometheusText output of the same registry', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    const viaProm = await scrape(prom);
    const viaCore = parsePrometheusText(prometheusText(collectMetrics(scenario.registry)));
    expect(viaCore.size).toBeGreaterThan(0);
    for (const [name, family] of viaCore) {
      expect(viaProm.get(name), name).toEqual(family);
    }
  });

  it('uses the buckets given as durationBuckets', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry, { durationBuckets: [0.01, 0.1] });
    const families = await scrape(prom);
    const labels = { kind: 'circuitBreaker', name: 'payments', key: '' };
    const bucket = (le: string) =>
      sampleValue(families, DURATION, { ...labels, le }, `${DURATION}_bucket`);
    expect([bucket('0.01'), bucket('0.1'), bucket('+Inf')]).toEqual([1, 3, 3]);
    expect(
      families.get(DURATION)!.samples.filter((s) => s.name === `${DURATION}_bucket`),
    ).toHaveLength(6);
  });

  it('escapes a hostile key and name in label values so they read back unchanged', async () => {
    const clock = new ManualClock();
    const key = 'a"b\\c\nd';
    const name = 'x"}\n# TYPE evil counter\nevil 1';
    const registry = new Registry({}, { clock });
    pipeline(registry.keyedCircuitBreaker('api', key)).executeSync(() => 1);
    pipeline(registry.circuitBreaker(name)).executeSync(() => 1);
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, registry);
    const text = await prom.metrics();
    expect(text).toContain('key="a\\"b\\\\c\\nd"');
    expect(text).not.toMatch(/^evil/m);
    const families = parsePrometheusText(text);
    expect(families.has('evil')).toBe(false);
    const calls = 'breakwater_circuit_breaker_calls_total';
    expect(sampleValue(families, calls, { name: 'api', key, outcome: 'success' })).toBe(1);
    expect(sampleValue(families, calls, { name, key: '', outcome: 'success' })).toBe(1);
    registry.dispose();
  });

  it('sums keys beyond maxKeysPerName into key="_other", keys not closed first', async () => {
    const clock = new ManualClock();
    const registry = new Registry(
      { circuitBreakers: { api: { window: { kind: 'consecutive', threshold: 1 } } } },
      { clock },
    );
    const use = (key: string, fail: boolean) =>
      pipeline(registry.keyedCircuitBreaker('api', key)).tryExecute(() => {
        if (fail) throw new Error('down');
        return key;
      });
    await use('broken', true); // opens: reported one by one although least recently used
    for (const key of ['k1', 'k2', 'k3', 'k4']) await use(key, false);
    await use('k4', false);
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, registry, { maxKeysPerName: 2 });
    const families = await scrape(prom);
    const state = 'breakwater_circuit_breaker_state';
    const calls = 'breakwater_circuit_breaker_calls_total';
    const keys = new Set(families.get(calls)!.samples.map((s) => s.labels.key));
    expect([...keys].sort()).toEqual(['_other', 'broken', 'k4']);
    expect(sampleValue(families, state, { name: 'api', key: 'broken', state: 'open' })).toBe(1);
    expect(sampleValue(families, calls, { name: 'api', key: 'k4', outcome: 'success' })).toBe(2);
    // k1, k2 and k3: three keys closed, three successes.
    expect(sampleValue(families, state, { name: 'api', key: '_other', state: 'closed' })).toBe(3);
    expect(sampleValue(families, calls, { name: 'api', key: '_other', outcome: 'success' })).toBe(
      3,
    );
    registry.dispose();
  });

  it('returns prom-client JSON with labels, values, metric names and the sum aggregator', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    const json = await prom.getMetricsAsJSON();
    const calls = json.find((m) => m.name === 'breakwater_circuit_breaker_calls_total');
    expect(calls).toEqual({
      name: 'breakwater_circuit_breaker_calls_total',
      help: 'Calls a circuit breaker admitted, by outcome.',
      type: 'counter',
      aggregator: 'sum',
      values: [
        { labels: { name: 'payments', key: '', outcome: 'success' }, value: 1 },
        { labels: { name: 'payments', key: '', outcome: 'failure' }, value: 2 },
        { labels: { name: 'payments', key: '', outcome: 'ignored' }, value: 0 },
      ],
    });
    const duration = json.find((m) => m.name === DURATION)!;
    expect(duration.type).toBe('histogram');
    const labels = { kind: 'circuitBreaker', name: 'payments', key: '' };
    expect(duration.values.slice(0, 17)).toEqual([
      ...DEFAULT_BOUNDS.map((le, i) => ({
        labels: { ...labels, le },
        value: PAYMENTS_BUCKETS[i],
        metricName: `${DURATION}_bucket`,
      })),
      { labels: { ...labels, le: '+Inf' }, value: 3, metricName: `${DURATION}_bucket` },
      { labels, value: expect.closeTo(0.043, 9), metricName: `${DURATION}_sum` },
      { labels, value: 3, metricName: `${DURATION}_count` },
    ]);
  });

  it('sums the values of cluster workers in an AggregatorRegistry', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    const worker = await prom.getMetricsAsJSON();
    const merged = AggregatorRegistry.aggregate([worker, worker]);
    const families = parsePrometheusText(await merged.metrics());
    const calls = 'breakwater_circuit_breaker_calls_total';
    expect(sampleValue(families, calls, { name: 'payments', key: '', outcome: 'failure' })).toBe(4);
    const labels = { kind: 'circuitBreaker', name: 'payments', key: '' };
    expect(sampleValue(families, DURATION, labels, `${DURATION}_count`)).toBe(6);
  });

  it('names counters for OpenMetrics as prom-client does', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry<OpenMetricsContentType>();
    prom.setContentType(PromRegistry.OPENMETRICS_CONTENT_TYPE);
    registerBreakwaterMetrics(prom, scenario.registry);
    for (let i = 0; i < 2; i++) {
      const text = await prom.metrics();
      expect(text).toContain('# TYPE breakwater_circuit_breaker_calls counter');
      expect(text).toContain(
        'breakwater_circuit_breaker_calls_total{name="payments",key="",outcome="failure"} 2',
      );
      expect(text.endsWith('# EOF\n')).toBe(true);
    }
  });

  it('collects the registry once per scrape for all families, and afresh on each scrape', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    const reads = vi.spyOn(scenario.registry, 'instancesForMetrics');
    await prom.metrics();
    expect(reads).toHaveBeenCalledTimes(1);
    await prom.getMetricsAsJSON();
    expect(reads).toHaveBeenCalledTimes(2);
    await pipeline(scenario.registry.rateLimiter('search')).tryExecute(() => 'refused');
    const families = await scrape(prom);
    expect(reads).toHaveBeenCalledTimes(3);
    const refused = { name: 'search', key: '', result: 'rejected' };
    expect(sampleValue(families, 'breakwater_rate_limiter_permits_total', refused)).toBe(2);
    await prom.metrics();
    expect(reads).toHaveBeenCalledTimes(4);
    reads.mockRestore();
  });

  it('lists HELP and TYPE of a family no instance reports yet, and its series once one does', async () => {
    const clock = new ManualClock();
    const registry = new Registry({}, { clock });
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, registry);
    let families = await scrape(prom);
    expect(families.get('breakwater_bulkhead_in_flight')).toEqual({
      name: 'breakwater_bulkhead_in_flight',
      help: 'Calls in flight.',
      type: 'gauge',
      samples: [],
    });
    pipeline(registry.bulkhead('later')).executeSync(() => 1);
    families = await scrape(prom);
    expect(
      sampleValue(families, 'breakwater_bulkhead_admitted_total', { name: 'later', key: '' }),
    ).toBe(1);
    registry.dispose();
  });

  it('adds the prom-client registry default labels to every series', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    prom.setDefaultLabels({ service: 'shop' });
    registerBreakwaterMetrics(prom, scenario.registry);
    const families = await scrape(prom);
    const timeouts = 'breakwater_timeout_timeouts_total';
    expect(sampleValue(families, timeouts, { name: 'report', key: '', service: 'shop' })).toBe(1);
    const labels = { kind: 'circuitBreaker', name: 'payments', key: '', service: 'shop' };
    expect(sampleValue(families, DURATION, labels, `${DURATION}_count`)).toBe(3);
  });

  it('keeps its values through resetMetrics, which cannot reset the policies', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, scenario.registry);
    prom.resetMetrics();
    const families = await scrape(prom);
    expect(
      sampleValue(families, 'breakwater_timeout_timeouts_total', { name: 'report', key: '' }),
    ).toBe(1);
  });

  it('unregisters its metrics on dispose and leaves the others', async () => {
    const scenario = await runScenario();
    const prom = new PromRegistry();
    const mine = new Counter({ name: 'app_requests_total', help: 'Requests.', registers: [prom] });
    mine.inc();
    const dispose = registerBreakwaterMetrics(prom, scenario.registry);
    expect(prom.getSingleMetric('breakwater_circuit_breaker_state')).toBeDefined();
    dispose();
    dispose();
    for (const d of FAMILIES) expect(prom.getSingleMetric(d.name)).toBeUndefined();
    const text = await prom.metrics();
    expect(text).not.toContain('breakwater_');
    expect(sampleValue(parsePrometheusText(text), 'app_requests_total', {})).toBe(1);
    // Registering again after dispose works.
    registerBreakwaterMetrics(prom, scenario.registry);
    expect(prom.getSingleMetric('breakwater_circuit_breaker_state')).toBeDefined();
  });

  it('refuses a second registration on the same prom-client registry, registering nothing', async () => {
    const registry = new Registry();
    const prom = new PromRegistry();
    registerBreakwaterMetrics(prom, registry);
    const before = prom.getMetricsAsArray().length;
    expect(() => registerBreakwaterMetrics(prom, new Registry())).toThrow(UsageError);
    expect(() => registerBreakwaterMetrics(prom, new Registry())).toThrow(
      /already has a metric named breakwater_circuit_breaker_state/,
    );
    expect(prom.getMetricsAsArray()).toHaveLength(before);
  });

  it('reads defaultRegistry, with the named policies built in code, when given no registry', async () => {
    const search = circuitBreaker({ name: 'search' });
    await pipeline(search).execute(() => 'ok');
    const prom = new PromRegistry();
    const unregister = registerBreakwaterMetrics(prom);
    const families = await scrape(prom);
    const calls = { name: 'search', key: '', outcome: 'success' };
    expect(sampleValue(families, 'breakwater_circuit_breaker_calls_total', calls)).toBe(1);
    unregister();
  });

  it('throws OptionsError naming the argument or option, and registers nothing', () => {
    const prom = new PromRegistry();
    const registry = new Registry();
    const cases: [() => unknown, string][] = [
      [() => registerBreakwaterMetrics({} as PromRegistry, registry), 'promRegistry'],
      [() => registerBreakwaterMetrics(null as unknown as PromRegistry, registry), 'promRegistry'],
      [() => registerBreakwaterMetrics(prom, {} as Registry), 'registry'],
      [() => registerBreakwaterMetrics(prom, registry, { maxKeysPerName: -1 }), 'maxKeysPerName'],
      [
        () => registerBreakwaterMetrics(prom, registry, { durationBuckets: [2, 1] }),
        'durationBuckets',
      ],
      [() => registerBreakwaterMetrics(prom, registry, { maxKeys: 5 } as never), 'maxKeys'],
    ];
    for (const [register, option] of cases) {
      expect(optionsError(register).option).toBe(option);
    }
    expect(prom.getMetricsAsArray()).toHaveLength(0);
  });

  it('knows every family collectMetrics reports, with the same type and help', async () => {
    const scenario = await runScenario();
    const clock = scenario.clock;
    const keyed = new Registry({ rateLimiters: { c: { limit: 5 } } }, { clock });
    pipeline(keyed.keyedCircuitBreaker('a', 'k')).executeSync(() => 1);
    pipeline(keyed.keyedBulkhead('b', 'k')).executeSync(() => 1);
    await pipeline(keyed.keyedRateLimiter('c', 'k')).tryExecute(() => 1);
    await throwInCallbacks();
    const reported = [
      ...collectMetrics(scenario.registry),
      ...collectMetrics(keyed, { maxKeysPerName: 0 }),
    ];
    for (const f of reported) {
      expect(
        FAMILIES.find((d) => d.name === f.name),
        f.name,
      ).toMatchObject({
        name: f.name,
        type: f.type,
        help: f.help,
      });
    }
    expect(new Set(reported.map((f) => f.name)).size).toBe(FAMILIES.length);
    keyed.dispose();
  });
});
