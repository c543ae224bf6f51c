/**
 * A policy kind defined here, outside the library (a descriptor and a small engine, with
 * latency metrics that can be turned off), reported by every metrics exporter of a registry
 * given it in its `kinds` option: `collectMetrics`, the Prometheus text, prom-client and
 * OpenTelemetry. Nothing in src/ knows it. The concurrency cap of test/support, a kind with
 * states, shows the keys out of their rest state listed first.
 */
import { DataPointType } from '@opentelemetry/sdk-metrics';
import { Registry as PromRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  collectMetrics,
  type HistogramFamily,
  type MetricFamily,
  OptionsError,
  prometheusText,
  Registry,
  type RegistryConfig,
} from '../../src/index.js';
import {
  configSchema,
  type InstanceView,
  type KeyedGroup,
  type KeyedInstancesView,
  type KindConfigTypes,
  type KindMetrics,
  LatencyHistogram,
  type MetricFamilyDescriptor,
  type OptionsData,
  type PolicyKindDescriptor,
} from '../../src/kinds/index.js';
import { observeBreakwaterMetrics } from '../../src/opentelemetry/index.js';
import { registerBreakwaterMetrics } from '../../src/prometheus/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { pointValue, startMetrics } from '../opentelemetry/reader.js';
import { parsePrometheusText, sampleValue } from '../prometheus/parse.js';
import { capFamilies, concurrencyCapKind } from '../support/concurrencyCapKind.js';

/** A quota: the first `limit` calls of an instance are admitted, the later ones refused. */
class Quota {
  admitted = 0;
  refused = 0;

  constructor(
    readonly name: string,
    public limit: number,
    readonly metrics: boolean,
    readonly latency: LatencyHistogram | undefined,
  ) {}

  /** Takes one call of the quota, which lasted `ms` when admitted. */
  take(ms: number): boolean {
    if (this.admitted >= this.limit) {
      this.refused++;
      return false;
    }
    this.admitted++;
    this.latency?.record(ms);
    return true;
  }
}

interface QuotaOptions {
  readonly name: string;
  readonly limit: number;
  readonly latency: boolean;
  readonly metrics: boolean;
}

/** A quota in config data: `defaults.quota` and the section `quotas`. */
interface QuotaConfig {
  readonly limit?: number;
  readonly latency?: boolean;
  readonly metrics?: boolean;
}

type Config = RegistryConfig<{ quota: KindConfigTypes<'quotas', QuotaConfig> }>;

interface QuotaCounts {
  admitted: number;
  refused: number;
  remaining: number;
}

function resolveQuota(data: OptionsData): QuotaOptions {
  const { name = 'quota', limit = 2, latency = false, metrics = true } = data;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new OptionsError('limit', limit, 'a positive integer');
  }
  return { name: String(name), limit, latency: latency === true, metrics: metrics !== false };
}

const quotaFamilies = {
  calls: {
    name: 'breakwater_quota_calls_total',
    type: 'counter',
    help: 'Calls a quota admitted or refused.',
    labels: ['name', 'key', 'result'],
    unit: '{call}',
    otel: { name: 'breakwater.quota.calls', kind: 'counter' },
  },
  remaining: {
    name: 'breakwater_quota_remaining',
    type: 'gauge',
    help: 'Calls a quota will still admit.',
    labels: ['name', 'key'],
    unit: '{call}',
    otel: { name: 'breakwater.quota.remaining', kind: 'upDownCounter' },
  },
} as const satisfies Record<string, MetricFamilyDescriptor>;

const quotaMetrics: KindMetrics<Quota, QuotaCounts> = {
  families: Object.values(quotaFamilies),
  enabled: (q) => q.metrics,
  latency: (q) => q.latency,
  counts: () => ({ admitted: 0, refused: 0, remaining: 0 }),
  add(c, q) {
    c.admitted += q.admitted;
    c.refused += q.refused;
    c.remaining += q.limit - q.admitted;
  },
  addCounts(c, other) {
    c.admitted += other.admitted;
    c.refused += other.refused;
    c.remaining += other.remaining;
  },
  isEmpty: (c) => c.admitted + c.refused === 0,
  series(sink, name, key, c) {
    sink.add(quotaFamilies.calls, { name, key, result: 'admitted' }, c.admitted);
    sink.add(quotaFamilies.calls, { name, key, result: 'refused' }, c.refused);
    sink.add(quotaFamilies.remaining, { name, key }, c.remaining);
  },
};

/** The quotas of one keyed name: never shelved; a key dropped leaves its counters behind. */
class QuotaGroup implements KeyedGroup<Quota, QuotaOptions, QuotaCounts> {
  readonly stride = 0;
  instances!: KeyedInstancesView<Quota>;
  readonly retired = quotaMetrics.counts();
  readonly latency: LatencyHistogram | undefined;

  constructor(
    private readonly name: string,
    public options: QuotaOptions,
  ) {
    this.latency = options.latency ? new LatencyHistogram() : undefined;
  }

  get metricsEnabled(): boolean {
    return this.options.metrics;
  }

  create(key: string): Quota {
    const { limit, metrics } = this.options;
    return new Quota(`${this.name}:${key}`, limit, metrics, this.latency);
  }

  revive(): void {}

  shelve(): boolean {
    return false;
  }

  isProtected(): boolean {
    return false;
  }

  retire(quota: Quota | undefined): void {
    if (quota === undefined) return;
    // What it could still admit goes with it: only its counters stay in the name's totals.
    this.retired.admitted += quota.admitted;
    this.retired.refused += quota.refused;
  }

  dispose(): void {}

  check(): void {}

  apply(options: QuotaOptions, keep: readonly Quota[]): void {
    this.options = options;
    for (const q of keep) q.limit = options.limit;
  }

  view(quota: Quota | undefined): InstanceView {
    return { stats: quota === undefined ? {} : { admitted: quota.admitted } };
  }
}

const quotaKind: PolicyKindDescriptor<Quota, QuotaOptions, QuotaCounts> = {
  name: 'quota',
  label: 'quota',
  section: 'quotas',
  is: (value): value is Quota => value instanceof Quota,
  create(data) {
    const o = resolveQuota(data as OptionsData);
    return new Quota(o.name, o.limit, o.metrics, o.latency ? new LatencyHistogram() : undefined);
  },
  resolve: resolveQuota,
  reconfigure: (quota, options) => () => {
    quota.limit = options.limit;
  },
  dispose() {},
  view: (quota) => ({ stats: { admitted: quota.admitted, refused: quota.refused } }),
  config: {
    schema: configSchema([
      ['limit', 'value'],
      ['latency', 'value'],
      ['metrics', 'value'],
    ]),
  },
  keyed: (name, options) => new QuotaGroup(name, options),
  metrics: quotaMetrics,
};

const CALLS = 'breakwater_quota_calls_total';
const REMAINING = 'breakwater_quota_remaining';
const DURATION = 'breakwater_call_duration_seconds';

let registry: Registry | undefined;

afterEach(() => {
  registry?.dispose();
  registry = undefined;
});

/**
 * A registry holding quotas: `search` (limit 2, latency on) took calls of 5, 15 and 25 ms,
 * the third refused; `quiet` (metrics off) took one, by name and by key `k`; under the keyed name `tenants` (limit 2,
 * latency on, keys dropped after a minute unused), keys `gone` (2 calls of 10 ms, then dropped),
 * `a` (1 call of 10 ms), `b` (3 calls of 10 ms, one refused) and `c` (1 call of 30 ms), in
 * that order.
 */
function quotaRegistry(): Registry {
  const clock = new ManualClock();
  const config: Config = {
    quotas: {
      search: { limit: 2, latency: true },
      quiet: { metrics: false },
      tenants: { limit: 2, latency: true },
    },
    keys: { idleTimeout: '1m' },
  };
  registry = new Registry(config, { clock, kinds: [quotaKind] });
  const search = registry.get(quotaKind, 'search');
  for (const ms of [5, 15, 25]) search.take(ms);
  registry.get(quotaKind, 'quiet').take(1);
  registry.getKeyed(quotaKind, 'quiet', 'k').take(1);
  const tenant = (key: string) => registry!.getKeyed(quotaKind, 'tenants', key);
  for (let i = 0; i < 2; i++) tenant('gone').take(10);
  clock.advance(60_000);
  tenant('a').take(10);
  for (let i = 0; i < 3; i++) tenant('b').take(10);
  tenant('c').take(30);
  return registry;
}

function value(families: readonly MetricFamily[], name: string, labels: object): number {
  const f = families.find((x) => x.name === name);
  if (f === undefined || f.type === 'histogram') throw new Error(`No family ${name}`);
  const s = f.samples.find((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  if (s === undefined) throw new Error(`No ${name}${JSON.stringify(labels)}`);
  return s.value;
}

describe('metrics of a policy kind defined outside the library', () => {
  it('collects its named instances, its keys one by one and the rest summed into _other', () => {
    const m = collectMetrics(quotaRegistry(), { maxKeysPerName: 1 });
    expect(m.map((f) => f.name)).toEqual([CALLS, REMAINING, DURATION]);
    const search = { name: 'search', key: '' };
    expect(value(m, CALLS, { ...search, result: 'admitted' })).toBe(2);
    expect(value(m, CALLS, { ...search, result: 'refused' })).toBe(1);
    expect(value(m, REMAINING, search)).toBe(0);
    // c, the most recently used key, one by one; a and b, and gone (dropped), in _other.
    const calls = m.find((f) => f.name === CALLS)!;
    expect(calls.samples.map((s) => s.labels.key)).toEqual(['', '', 'c', 'c', '_other', '_other']);
    expect(calls.samples.some((s) => s.labels.name === 'quiet')).toBe(false);
    expect(value(m, CALLS, { name: 'tenants', key: 'c', result: 'admitted' })).toBe(1);
    expect(value(m, REMAINING, { name: 'tenants', key: 'c' })).toBe(1);
    const other = { name: 'tenants', key: '_other' };
    expect(value(m, CALLS, { ...other, result: 'admitted' })).toBe(5);
    expect(value(m, CALLS, { ...other, result: 'refused' })).toBe(1);
    // What a dropped key could still admit goes with it: a's 1, b's 0.
    expect(value(m, REMAINING, other)).toBe(1);
    const duration = m.find((f) => f.name === DURATION) as HistogramFamily;
    expect(duration.samples.map((s) => [s.labels, s.count, s.sum])).toEqual([
      [{ kind: 'quota', name: 'search', key: '' }, 2, 0.02],
      [{ kind: 'quota', name: 'tenants', key: '_all' }, 6, 0.08],
    ]);
  });

  it('reports its families after the library kinds, in the order its descriptor lists them', () => {
    const reg = quotaRegistry();
    reg.circuitBreaker('db');
    reg.bulkhead('pool');
    const names = collectMetrics(reg).map((f) => f.name);
    expect(names.slice(-3)).toEqual([CALLS, REMAINING, DURATION]);
    expect(names.indexOf('breakwater_bulkhead_in_flight')).toBeLessThan(names.indexOf(CALLS));
  });

  it('renders its series in the Prometheus text with their HELP and TYPE', () => {
    const families = parsePrometheusText(prometheusText(collectMetrics(quotaRegistry())));
    expect(families.get(CALLS)).toMatchObject({ type: 'counter', help: quotaFamilies.calls.help });
    expect(families.get(REMAINING)).toMatchObject({ type: 'gauge' });
    expect(sampleValue(families, CALLS, { name: 'search', key: '', result: 'refused' })).toBe(1);
    expect(sampleValue(families, CALLS, { name: 'tenants', key: 'a', result: 'admitted' })).toBe(1);
    const all = { kind: 'quota', name: 'tenants', key: '_all' };
    expect(sampleValue(families, DURATION, all, `${DURATION}_count`)).toBe(6);
  });

  it('registers its families in prom-client before any instance reports into them', async () => {
    const clock = new ManualClock();
    registry = new Registry({}, { clock, kinds: [quotaKind] });
    const prom = new PromRegistry();
    const unregister = registerBreakwaterMetrics(prom, registry);
    expect(parsePrometheusText(await prom.metrics()).get(CALLS)).toEqual({
      name: CALLS,
      help: quotaFamilies.calls.help,
      type: 'counter',
      samples: [],
    });
    registry.get(quotaKind, 'late').take(1);
    registry.getKeyed(quotaKind, 'tenants', 'k').take(1);
    const families = parsePrometheusText(await prom.metrics());
    expect(sampleValue(families, CALLS, { name: 'late', key: '', result: 'admitted' })).toBe(1);
    expect(sampleValue(families, CALLS, { name: 'tenants', key: 'k', result: 'admitted' })).toBe(1);
    expect(sampleValue(families, REMAINING, { name: 'late', key: '' })).toBe(1);
    unregister();
    expect(prom.getSingleMetric(CALLS)).toBeUndefined();
  });

  it('is observed through OpenTelemetry instruments made from its descriptor', async () => {
    const metrics = startMetrics();
    try {
      const clock = new ManualClock();
      const config: Config = { quotas: { search: { latency: true } } };
      registry = new Registry(config, { clock, kinds: [quotaKind] });
      observeBreakwaterMetrics(metrics.meter, registry);
      const search = registry.get(quotaKind, 'search');
      for (const ms of [40, 40, 40]) search.take(ms);
      const collected = await metrics.collect();
      const name = { 'breakwater.policy.name': 'search' };
      expect(pointValue(collected, 'breakwater.quota.calls', { ...name, result: 'admitted' })).toBe(
        2,
      );
      expect(pointValue(collected, 'breakwater.quota.calls', { ...name, result: 'refused' })).toBe(
        1,
      );
      expect(pointValue(collected, 'breakwater.quota.remaining', name)).toBe(0);
      const calls = collected.get('breakwater.quota.calls')!;
      expect(calls.dataPointType === DataPointType.SUM && calls.isMonotonic).toBe(true);
      expect(calls.descriptor).toMatchObject({
        unit: '{call}',
        description: quotaFamilies.calls.help,
      });
      const remaining = collected.get('breakwater.quota.remaining')!;
      expect(remaining.dataPointType === DataPointType.SUM && remaining.isMonotonic).toBe(false);
      const median = pointValue(collected, 'breakwater.call.duration', {
        ...name,
        'breakwater.policy.kind': 'quota',
        quantile: '0.5',
      });
      // Within the width of a latency bucket (1/16) of 40 ms.
      expect(Math.abs(median * 1000 - 40) / 40).toBeLessThanOrEqual(1 / 16);
    } finally {
      await metrics.close();
    }
  });

  it("lists the keys out of their kind's rest state first, ahead of keys used since", () => {
    const clock = new ManualClock();
    registry = new Registry({}, { clock, kinds: [concurrencyCapKind] });
    const cap = (key: string) => registry!.getKeyed(concurrencyCapKind, 'db', key);
    cap('stopped').stop();
    cap('stopped').admit(clock.now());
    cap('a').admit(clock.now());
    for (let i = 0; i < 2; i++) cap('b').admit(clock.now());
    const m = collectMetrics(registry, { maxKeysPerName: 1 });
    expect(m.map((f) => f.name)).toEqual([capFamilies.inFlight.name, capFamilies.refused.name]);
    const refused = m.find((f) => f.name === capFamilies.refused.name)!;
    expect(refused.samples.map((s) => s.labels.key)).toEqual(['stopped', '_other']);
    expect(value(m, capFamilies.refused.name, { name: 'db', key: 'stopped' })).toBe(1);
    expect(value(m, capFamilies.inFlight.name, { name: 'db', key: '_other' })).toBe(3);
  });
});
