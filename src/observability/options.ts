import { OptionsError } from '../errors/OptionsError.js';
import { collectMetrics } from '../exporters/collect.js';
import type { CollectOptions } from '../exporters/families.js';
import type { DurationString } from '../protocol/kind.js';
import { Registry } from '../registry/Registry.js';
import { checkOptionsObject, duration, integer } from '../validation/validate.js';

/** Options of {@link createObservabilityHandler}. */
export interface ObservabilityHandlerOptions {
  /**
   * A path prefix the handler owns, for a plain `node:http` server that hands it every request
   * (`'/ops'` or `'/ops/'` serves `/ops/health`, `/ops/metrics`, ...). Leave it out where a framework strips
   * the mount path from `req.url` (Express `app.use('/ops', handler)`).
   * @default '' (the routes sit at the root of `req.url`)
   */
  readonly basePath?: string;
  /**
   * Names of circuit breakers (or instances of another kind with states) the service cannot
   * work without: `/health` answers 503 while one of them is down by its kind's `health`, a
   * breaker open or forced open. A keyed name covers every key under it.
   * @default []
   */
  readonly critical?: readonly string[];
  /**
   * How often `/events` sends a fresh snapshot to the connected dashboards: ms in
   * [100, 60000] (rounded to whole ms), as a number or a string like `"2s"`. One timer serves
   * every client.
   * @default 1000
   */
  readonly interval?: number | DurationString;
  /**
   * Dashboards (`/events` streams) connected at once: an integer in [1, 10000]. One more gets
   * 503 with `Retry-After`.
   * @default 32
   */
  readonly maxClients?: number;
  /**
   * Keys of one keyed name listed by `/health` and the dashboard (an integer in [0, 100000]);
   * the others are counted in `omitted`, so a flood of keys cannot make the page or the answer
   * huge. Breakers that are not closed come first, then the most recently used keys.
   * @default 20
   */
  readonly maxKeysPerName?: number;
  /** Options of `collectMetrics` for `/metrics` (keys per name, histogram buckets). */
  readonly collect?: CollectOptions;
  /**
   * The dashboard's heading and page title (shown as text).
   * @default 'breakwater'
   */
  readonly title?: string;
}

/** Defaults of {@link ObservabilityHandlerOptions}. */
export const observabilityHandlerDefaults = Object.freeze({
  basePath: '',
  critical: Object.freeze([]) as readonly string[],
  interval: 1000,
  maxClients: 32,
  maxKeysPerName: 20,
  title: 'breakwater',
});

/** @internal */
export interface ResolvedHandlerOptions {
  readonly basePath: string;
  readonly critical: ReadonlySet<string>;
  readonly interval: number;
  readonly maxClients: number;
  readonly maxKeysPerName: number;
  readonly collect: CollectOptions | undefined;
  readonly title: string;
}

const KEYS = [
  'basePath',
  'critical',
  'interval',
  'maxClients',
  'maxKeysPerName',
  'collect',
  'title',
];

/** @internal Applies defaults and throws {@link OptionsError} on a bad option. */
export function resolveHandlerOptions(options: unknown): ResolvedHandlerOptions {
  const o = checkOptionsObject(options, KEYS, '') as ObservabilityHandlerOptions;
  const d = observabilityHandlerDefaults;
  return {
    basePath: basePath(o.basePath),
    critical: new Set(critical(o.critical)),
    // Whole ms: the interval is also the `retry:` field of the event stream, which takes digits.
    interval: Math.round(duration(o.interval, 'interval', d.interval, 100, false, 60_000)),
    maxClients: integer(o.maxClients, 'maxClients', d.maxClients, 1, 10_000),
    maxKeysPerName: integer(o.maxKeysPerName, 'maxKeysPerName', d.maxKeysPerName, 0, 100_000),
    collect: collect(o.collect),
    title: title(o.title),
  };
}

function basePath(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string' && /^(\/[^/?#\s]+)*\/?$/.test(value)) {
    return value.endsWith('/') ? value.slice(0, -1) : value;
  }
  throw new OptionsError(
    'basePath',
    value,
    "a path such as '/ops' (segments after '/', no query, no whitespace) or ''",
  );
}

function critical(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) {
    const bad = value.findIndex((name) => typeof name !== 'string' || name.length === 0);
    if (bad < 0) return value as string[];
    throw new OptionsError(`critical[${bad}]`, value[bad], 'a non-empty breaker name');
  }
  throw new OptionsError('critical', value, 'an array of circuit breaker names');
}

function collect(value: unknown): CollectOptions | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError('collect', value, 'an options object of collectMetrics');
  }
  // collectMetrics checks its options on every call: one call on an empty registry checks
  // them now, so a bad value fails here rather than at the first scrape.
  try {
    collectMetrics(new Registry(), value as CollectOptions);
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
    throw new OptionsError(`collect.${error.option}`, error.value, error.expected);
  }
  return value as CollectOptions;
}

function title(value: unknown): string {
  if (value === undefined) return observabilityHandlerDefaults.title;
  if (typeof value === 'string' && value.length > 0 && value.length <= 200) return value;
  throw new OptionsError('title', value, 'a string of 1 to 200 characters');
}
