import { describe, expect, it } from 'vitest';
import {
  collectMetrics,
  type MetricFamily,
  pipeline,
  prometheusText,
  Registry,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { DEFAULT_BOUNDS, PAYMENTS_BUCKETS, SCENARIO_SERIES } from './expected.js';
import { parsePrometheusText, sampleValue } from './parse.js';
import { useScenario } from './scenario.js';

const DURATION = 'breakwater_call_duration_seconds';

const runScenario = useScenario();

describe('prometheusText', () => {
  it('renders every counter and gauge of a known call sequence with its exact value', async () => {
    const scenario = await runScenario();
    const families = parsePrometheusText(prometheusText(collectMetrics(scenario.registry)));
    for (const [family, labels, value] of SCENARIO_SERIES) {
      expect(sampleValue(families, family, labels), `${family}${JSON.stringify(labels)}`).toBe(
        value,
      );
    }
    const scalars = [...families.values()].filter((f) => f.type !== 'histogram');
    expect(scalars.reduce((n, f) => n + f.samples.length, 0)).toBe(SCENARIO_SERIES.length);
    for (const f of scalars) {
      expect(f.type).toBe(f.name.endsWith('_total') ? 'counter' : 'gauge');
      expect(f.help.length).toBeGreaterThan(0);
    }
  });

  it('renders the duration histogram as cumulative buckets ending at +Inf, sum and count', async () => {
    const scenario = await runScenario();
    const text = prometheusText(collectMetrics(scenario.registry));
    const families = parsePrometheusText(text);
    expect(families.get(DURATION)?.type).toBe('histogram');
    const labels = { kind: 'circuitBreaker', name: 'payments', key: '' };
    const buckets = families
      .get(DURATION)!
      .samples.filter((s) => s.name === `${DURATION}_bucket` && s.labels.name === 'payments');
    expect(buckets.map((s) => s.labels.le)).toEqual([...DEFAULT_BOUNDS.map(String), '+Inf']);
    expect(buckets.map((s) => s.value)).toEqual([...PAYMENTS_BUCKETS, 3]);
    expect(sampleValue(families, DURATION, labels, `${DURATION}_sum`)).toBeCloseTo(0.043, 9);
    expect(sampleValue(families, DURATION, labels, `${DURATION}_count`)).toBe(3);
  });

  it('escapes backslash, double quote and line feed in label values', () => {
    const clock = new ManualClock();
    const registry = new Registry({}, { clock });
    const key = 'a"b\\c\nd';
    const name = 'n\\"\n} 1\nforged_total 99';
    pipeline(registry.keyedCircuitBreaker('api', key)).executeSync(() => 1);
    pipeline(registry.bulkhead(name)).executeSync(() => 1);
    const text = prometheusText(collectMetrics(registry));
    expect(text).toContain('key="a\\"b\\\\c\\nd"');
    expect(text).not.toMatch(/^forged_total/m);
    const families = parsePrometheusText(text);
    expect(families.has('forged_total')).toBe(false);
    expect(
      sampleValue(families, 'breakwater_circuit_breaker_calls_total', {
        name: 'api',
        key,
        outcome: 'success',
      }),
    ).toBe(1);
    expect(sampleValue(families, 'breakwater_bulkhead_admitted_total', { name, key: '' })).toBe(1);
    registry.dispose();
  });

  it('escapes HELP text and writes NaN and infinities as the format spells them', () => {
    const families: MetricFamily[] = [
      {
        name: 'x_value',
        help: 'back\\slash and\nnewline',
        type: 'gauge',
        samples: [
          { labels: { v: 'nan' }, value: Number.NaN },
          { labels: { v: 'inf' }, value: Number.POSITIVE_INFINITY },
          { labels: { v: 'neg' }, value: Number.NEGATIVE_INFINITY },
          { labels: {}, value: 1.5e-7 },
        ],
      },
    ];
    const text = prometheusText(families);
    expect(text).toContain('# HELP x_value back\\\\slash and\\nnewline\n');
    const parsed = parsePrometheusText(text);
    expect(parsed.get('x_value')?.help).toBe('back\\slash and\nnewline');
    expect(sampleValue(parsed, 'x_value', { v: 'nan' })).toBeNaN();
    expect(sampleValue(parsed, 'x_value', { v: 'inf' })).toBe(Number.POSITIVE_INFINITY);
    expect(sampleValue(parsed, 'x_value', { v: 'neg' })).toBe(Number.NEGATIVE_INFINITY);
    expect(sampleValue(parsed, 'x_value', {})).toBe(1.5e-7);
  });

  it('renders nothing for a registry with no instances', () => {
    expect(prometheusText(collectMetrics(new Registry()))).toBe('');
  });
});
