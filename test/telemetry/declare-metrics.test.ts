import { describe, expect, it } from 'vitest';
import { counter, declareMetrics, gauge, type SeriesSink } from '../../src/kinds/index.js';

interface Counts {
  calls: number;
  refused: number[];
  limit: number;
  latency: number;
  open: number;
}

class Policy {
  constructor(private readonly s: Record<string, unknown>) {}
  stats(): Record<string, unknown> {
    return this.s;
  }
}

const { families, metrics } = declareMetrics<Policy, Counts, keyof Counts>({
  prefix: 'valve',
  readings: {
    calls: counter('{call}', 'Calls.'),
    refused: counter('{call}', 'Refusals, by reason.', {
      label: 'reason',
      values: ['full', 'late'],
      array: 'refused',
    }),
    limit: gauge('{call}', 'The limit.'),
    latency: gauge('s', 'Latency.', { value: (ms) => ms / 1000, otelKind: 'gauge' }),
    open: gauge('1', 'Open.', { quantity: 'is_open' }),
  },
  combine: { limit: 'last', latency: 'max' },
});

/** The series written for `counts`, as [family, labels, value]. */
function written(counts: Counts): [string, Record<string, string>, number][] {
  const out: [string, Record<string, string>, number][] = [];
  const sink: SeriesSink = { add: (f, labels, value) => out.push([f.name, { ...labels }, value]) };
  metrics.series(sink, 'v', '', counts);
  return out;
}

describe('declareMetrics', () => {
  it('names each family from the prefix and the reading: _total on counters, _seconds in seconds', () => {
    expect(Object.values(families).map((f) => [f.name, f.type, f.labels, f.otel])).toEqual([
      [
        'breakwater_valve_calls_total',
        'counter',
        ['name', 'key'],
        { name: 'breakwater.valve.calls', kind: 'counter' },
      ],
      [
        'breakwater_valve_refused_total',
        'counter',
        ['name', 'key', 'reason'],
        { name: 'breakwater.valve.refused', kind: 'counter' },
      ],
      [
        'breakwater_valve_limit',
        'gauge',
        ['name', 'key'],
        { name: 'breakwater.valve.limit', kind: 'upDownCounter' },
      ],
      [
        'breakwater_valve_latency_seconds',
        'gauge',
        ['name', 'key'],
        { name: 'breakwater.valve.latency', kind: 'gauge' },
      ],
      [
        'breakwater_valve_is_open',
        'gauge',
        ['name', 'key'],
        { name: 'breakwater.valve.is_open', kind: 'upDownCounter' },
      ],
    ]);
    expect(metrics.families).toEqual(Object.values(families));
  });

  it('reads the stats fields named like the counts (true counts 1) and sums instances by their rule', () => {
    const c = metrics.counts();
    metrics.add(
      c,
      new Policy({ calls: 3, limit: 10, latency: 20, open: true, refused: 'ignored' }),
    );
    metrics.add(c, new Policy({ calls: 2, limit: 12, latency: 5, open: false }));
    c.refused[1] = 4;
    const other = metrics.counts();
    metrics.addCounts(other, c);
    metrics.addCounts(other, c);
    expect(other).toEqual({ calls: 10, refused: [0, 8], limit: 12, latency: 20, open: 2 });
    expect(written(c)).toEqual([
      ['breakwater_valve_calls_total', { name: 'v', key: '' }, 5],
      ['breakwater_valve_refused_total', { name: 'v', key: '', reason: 'full' }, 0],
      ['breakwater_valve_refused_total', { name: 'v', key: '', reason: 'late' }, 4],
      ['breakwater_valve_limit', { name: 'v', key: '' }, 12],
      ['breakwater_valve_latency_seconds', { name: 'v', key: '' }, 0.02],
      ['breakwater_valve_is_open', { name: 'v', key: '' }, 1],
    ]);
  });

  it('counts are empty while every counter is 0, whatever the gauges hold', () => {
    const c = metrics.counts();
    c.limit = 5;
    c.open = 1;
    expect(metrics.isEmpty(c)).toBe(true);
    c.refused[0] = 1;
    expect(metrics.isEmpty(c)).toBe(false);
  });
});
