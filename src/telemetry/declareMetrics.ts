import type { KindMetrics } from '../protocol/kind.js';
import type { LatencyHistogram } from './LatencyHistogram.js';
import type {
  InstrumentKind,
  MetricFamilyDescriptor,
  SeriesLabels,
  SeriesSink,
} from './metricFamily.js';

/** The numbers of one series, or of several instances summed: fields of numbers or arrays. */
export type MetricCounts = object;

/** The fields of `C` that hold a number. */
type NumberField<C> = { [K in keyof C]: C[K] extends number ? K : never }[keyof C] & string;
/** The fields of `C` that hold an array of numbers. */
type ArrayField<C> = { [K in keyof C]: C[K] extends number[] ? K : never }[keyof C] & string;

/**
 * One reading of a kind's stats that becomes a metric family: its type, help and unit, and
 * which field of the counts each of its series reports. The family's names follow from the
 * kind's metric prefix and the reading's key (`gaveUp` of `retry`:
 * `breakwater_retry_gave_up_total`, instrument `breakwater.retry.gave_up`); a reading with a
 * `label` writes one series per value of it.
 *
 * @typeParam C the kind's counts
 */
export interface MetricReading<C> {
  readonly type: 'counter' | 'gauge';
  /** The HELP text, and the OpenTelemetry description. */
  readonly help: string;
  /** UCUM unit (`{call}`, `1`); `s` adds `_seconds` to the Prometheus name. */
  readonly unit: string;
  /** The field a one-series reading reports. @default the reading's key, without `label` */
  readonly field?: NumberField<C>;
  /** The label whose values tell a labelled reading's series apart (`outcome`). */
  readonly label?: string;
  /** With `label`: the field each label value reports, in series order. */
  readonly fields?: Readonly<Record<string, NumberField<C>>>;
  /** With `label`: the label values, in series order, of the array field `array`. */
  readonly values?: readonly string[];
  /** With `label` and `values`: the array field whose numbers they report, by index. */
  readonly array?: ArrayField<C>;
  /** The value reported for a field's number (ms as seconds). @default the number */
  readonly value?: (n: number) => number;
  /** False for a label value whose series is left out of these counts. @default always shown */
  readonly shows?: (counts: C, labelValue: string) => boolean;
  /** The quantity in the family's names, when not the reading's key in snake case. */
  readonly quantity?: string;
  /** The instrument kind. @default `counter` for counters, `upDownCounter` for gauges */
  readonly otelKind?: InstrumentKind;
  /** The family itself, when it is another kind's (a Redis rate limiter reports the permits). */
  readonly family?: DeclaredFamily;
}

/** A counter reading: its unit, help and anything more (a label, a field not named as its key). */
export const counter = <C>(
  unit: string,
  help: string,
  more?: Partial<MetricReading<C>>,
): MetricReading<C> => ({ type: 'counter', unit, help, ...more });

/** A gauge reading: its unit, help and anything more (a label, a field not named as its key). */
export const gauge = <C>(
  unit: string,
  help: string,
  more?: Partial<MetricReading<C>>,
): MetricReading<C> => ({ type: 'gauge', unit, help, ...more });

/** How the number of a counts field combines when instances are summed. @default `sum` */
export type CountsCombine = 'sum' | 'last' | 'max';

/**
 * A kind's metrics as declarations: the readings that become families, and how an instance's
 * numbers are read. Summing instances, series, the keys summed into `_other` and what retired
 * keys leave behind are generic (see {@link declareMetrics}).
 *
 * @typeParam P the policy class
 * @typeParam C its counts: an object of number and number-array fields
 */
export interface MetricsDeclaration<P, C extends MetricCounts, K extends string> {
  /** The middle of the family names: `circuit_breaker` in `breakwater_circuit_breaker_state`. */
  readonly prefix: string;
  /** The start of the family names, for a kind defined outside the library. @default `breakwater` */
  readonly namespace?: string;
  /** The readings, in the order the families are reported. */
  readonly readings: { readonly [key in K]: MetricReading<C> };
  /** Empty counts. @default every field a reading names at 0 */
  counts?(): C;
  /**
   * Adds the numbers of `policy` to `counts`.
   * @default adds each field of `policy.stats()` named like a counts field (true counts 1)
   */
  read?(counts: C, policy: P): void;
  /** How fields that are not summed combine (a limit reports the last one). @default `sum` */
  readonly combine?: Readonly<Partial<Record<keyof C & string, CountsCombine>>>;
  /** True when `counts` hold nothing. @default every counter reading's fields are 0 */
  isEmpty?(counts: C): boolean;
  /** False for an instance built with metrics off. @default always true */
  enabled?(policy: P): boolean;
  /** The latency histogram of an instance that keeps one. */
  latency?(policy: P): LatencyHistogram | undefined;
}

/**
 * A family a kind declares: a counter or a gauge. Named, so that declarations print this name
 * rather than a union whose order the compiler may change from one build to the next.
 */
export interface DeclaredFamily extends MetricFamilyDescriptor<'counter' | 'gauge'> {}

/** A kind's declared metrics: its families by reading, and how collection reads them. */
export interface DeclaredMetrics<P, C, K extends string> {
  readonly families: { readonly [key in K]: DeclaredFamily };
  readonly metrics: KindMetrics<P, C>;
}

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The family a reading declares, named from the kind's prefix and the reading's key. */
function familyOf<C>(
  namespace: string,
  prefix: string,
  key: string,
  r: MetricReading<C>,
): DeclaredFamily {
  if (r.family !== undefined) return r.family;
  const quantity = r.quantity ?? snake(key);
  const suffix = (r.unit === 's' ? '_seconds' : '') + (r.type === 'counter' ? '_total' : '');
  return {
    name: `${namespace}_${prefix}_${quantity}${suffix}`,
    type: r.type,
    help: r.help,
    labels: r.label === undefined ? ['name', 'key'] : ['name', 'key', r.label],
    unit: r.unit,
    otel: {
      name: `${namespace}.${prefix}.${quantity}`,
      kind: r.otelKind ?? (r.type === 'counter' ? 'counter' : 'upDownCounter'),
    },
  };
}

/** The fields a reading reports. */
function fieldsOf<C>(r: MetricReading<C>): string[] {
  if (r.field !== undefined) return [r.field];
  if (r.fields !== undefined) return Object.values(r.fields);
  return r.array === undefined ? [] : [r.array];
}

type Numbers = Record<string, number | number[]>;

/**
 * Builds a kind's {@link KindMetrics} from declarations: collection reads each instance into
 * counts once per scrape, sums counts field by field (arrays element by element), and writes
 * one series per reading (one per label value for a labelled one).
 *
 * @example
 * ```ts
 * const { families, metrics } = declareMetrics<Quota, { admitted: number; refused: number }, 'calls'>({
 *   prefix: 'quota',
 *   readings: {
 *     calls: {
 *       type: 'counter', help: 'Calls of a quota, by result.', unit: '{call}',
 *       label: 'result', fields: { admitted: 'admitted', refused: 'refused' },
 *     },
 *   },
 * });
 * ```
 */
export function declareMetrics<P, C extends MetricCounts, K extends string>(
  d: MetricsDeclaration<P, C, K>,
): DeclaredMetrics<P, C, K> {
  const entries = (Object.entries(d.readings) as [K, MetricReading<C>][]).map(
    ([key, r]): [K, MetricReading<C>] =>
      r.label === undefined && r.field === undefined
        ? [key, { ...r, field: key as unknown as NumberField<C> }]
        : [key, r],
  );
  const families = {} as Record<K, DeclaredFamily>;
  for (const [key, r] of entries)
    families[key] = familyOf(d.namespace ?? 'breakwater', d.prefix, key, r);
  const combine = (d.combine ?? {}) as Record<string, CountsCombine | undefined>;
  const zeros: Numbers = {};
  for (const [, r] of entries) {
    for (const field of fieldsOf(r)) {
      zeros[field] = r.array === field ? r.values!.map(() => 0) : 0;
    }
  }
  const counted = entries.filter(([, r]) => r.type === 'counter').flatMap(([, r]) => fieldsOf(r));
  const counts =
    d.counts ??
    ((): C => {
      const c: Numbers = {};
      for (const field in zeros) {
        const z = zeros[field]!;
        c[field] = typeof z === 'number' ? 0 : z.slice();
      }
      return c as C;
    });
  const combineInto = (c: Numbers, field: string, n: number): void => {
    const rule = combine[field];
    const had = c[field] as number;
    c[field] = rule === 'last' ? n : rule === 'max' ? Math.max(had, n) : had + n;
  };
  const read =
    d.read ??
    ((c: C, policy: P): void => {
      const stats = (policy as { stats(): Record<string, unknown> }).stats();
      for (const field in c) {
        const v = stats[field];
        if (typeof v === 'number') combineInto(c as Numbers, field, v);
        else if (v === true) combineInto(c as Numbers, field, 1);
      }
    });
  const metrics: KindMetrics<P, C> = {
    families: Object.values(families),
    counts,
    add: read,
    addCounts(c, other) {
      const into = c as Numbers;
      const from = other as Numbers;
      for (const field in from) {
        const v = from[field];
        if (typeof v === 'number') combineInto(into, field, v);
        else if (Array.isArray(v)) {
          const a = into[field] as number[];
          for (let i = 0; i < v.length; i++) a[i]! += v[i]!;
        } else if (v === true) (into as Record<string, unknown>)[field] = true;
      }
    },
    isEmpty:
      d.isEmpty ??
      ((c) => {
        const n = c as Numbers;
        for (const field of counted) {
          const v = n[field]!;
          if (typeof v === 'number' ? v !== 0 : v.some((x) => x !== 0)) return false;
        }
        return true;
      }),
    series(sink, name, key, c) {
      const n = c as Numbers;
      for (const [k, r] of entries) write(sink, families[k], r, name, key, c, n);
    },
  };
  if (d.enabled !== undefined) metrics.enabled = d.enabled;
  if (d.latency !== undefined) metrics.latency = d.latency;
  return { families, metrics };
}

/** Writes the series of one reading. */
function write<C>(
  sink: SeriesSink,
  family: DeclaredFamily,
  r: MetricReading<C>,
  name: string,
  key: string,
  c: C,
  n: Numbers,
): void {
  const value = r.value ?? ((x: number) => x);
  if (r.field !== undefined) {
    sink.add(family, { name, key }, value(n[r.field] as number));
    return;
  }
  const label = r.label!;
  const one = (labelValue: string, x: number): void => {
    if (r.shows !== undefined && !r.shows(c, labelValue)) return;
    const labels: SeriesLabels = { name, key, [label]: labelValue };
    sink.add(family, labels, value(x));
  };
  if (r.fields !== undefined) {
    for (const labelValue in r.fields) one(labelValue, n[r.fields[labelValue]!] as number);
  } else {
    const a = n[r.array!] as number[];
    r.values!.forEach((labelValue, i) => {
      one(labelValue, a[i]!);
    });
  }
}
