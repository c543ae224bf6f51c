import type { Registry as PromRegistry } from 'prom-client';
import { OptionsError, UsageError } from '../errors/OptionsError.js';
import type { Disposer } from '../events/Listeners.js';
import { checkRegistry, collectMetrics } from '../exporters/collect.js';
import type { CollectOptions } from '../exporters/families.js';
import { metricFamiliesOf } from '../exporters/metricFamilies.js';
import { defaultRegistry, type Registry } from '../registry/Registry.js';
import { hasMethods } from '../validation/validate.js';
import { FamilyMetric } from './FamilyMetric.js';
import { OncePerScrape } from './OncePerScrape.js';

/**
 * The part of a prom-client `Registry` this module uses: prom-client's default `register`, a
 * `new Registry()` of either content type, or an `AggregatorRegistry`'s worker registry.
 */
export type PromRegistryLike = Pick<
  PromRegistry,
  'registerMetric' | 'removeSingleMetric' | 'getSingleMetric'
>;

/**
 * Options of {@link registerBreakwaterMetrics}: those of `collectMetrics`.
 * - `maxKeysPerName` (default 20): keys of one keyed name reported one by one; the others
 *   are summed into one series with `key="_other"`.
 * - `durationBuckets` (default 0.0005 … 10 s): bucket bounds of
 *   `breakwater_call_duration_seconds`.
 */
export type PrometheusOptions = CollectOptions;

/**
 * Registers every metric family of a breakwater registry with a prom-client registry: the
 * families of each of its kinds (the library's, and those given in its `kinds` option) and the
 * call duration histogram (names and labels in docs/observability.md). Values are read from the policies' own counters when the registry is
 * scraped, once per scrape for all families; nothing is added to the calls themselves.
 * Counters are exposed as counters and the duration histogram as a histogram with the same
 * buckets. Label values (instance names and keys, which may come from request data) are
 * escaped by prom-client per the exposition format. Without `registry`, reads
 * `defaultRegistry`, which lists the named policies built in code while they are referenced.
 *
 * Throws {@link OptionsError} for an invalid argument or option, and {@link UsageError} when
 * `promRegistry` already holds a metric of one of the names (registering twice); nothing is
 * registered then.
 *
 * @returns a function that removes the metrics again (those still registered by this call).
 *
 * @example
 * ```ts
 * import { register } from 'prom-client';
 * import { registerBreakwaterMetrics } from 'breakwater/prometheus';
 *
 * const unregister = registerBreakwaterMetrics(register, registry, { maxKeysPerName: 50 });
 * app.get('/metrics', async (_req, res) => {
 *   res.set('Content-Type', register.contentType).send(await register.metrics());
 * });
 * ```
 */
export function registerBreakwaterMetrics(
  promRegistry: PromRegistryLike,
  registry: Registry = defaultRegistry,
  options?: PrometheusOptions,
): Disposer {
  if (!hasMethods(promRegistry, ['registerMetric', 'removeSingleMetric', 'getSingleMetric'])) {
    throw new OptionsError('promRegistry', promRegistry, 'a prom-client Registry');
  }
  checkRegistry(registry);
  // Collecting once checks the options (it throws OptionsError) before anything is registered.
  // Every family of the registry's kinds is registered, those without series yet too:
  // prom-client cannot add a metric in the middle of a scrape.
  collectMetrics(registry, options);
  const families = metricFamiliesOf(registry.instancesForMetrics().map((k) => k.kind));
  for (const family of families) {
    if (promRegistry.getSingleMetric(family.name) !== undefined) {
      throw new UsageError(
        `The prom-client registry already has a metric named ${family.name}: breakwater metrics can be registered once per prom-client registry`,
      );
    }
  }
  const scrape = new OncePerScrape(() => collectMetrics(registry, options));
  const metrics = families.map((d) => new FamilyMetric(d, (n) => scrape.family(n)));
  for (const metric of metrics) {
    // prom-client types `registerMetric` for its own metric classes; FamilyMetric meets the
    // contract the registry relies on (see FamilyMetric).
    promRegistry.registerMetric(metric as unknown as Parameters<PromRegistry['registerMetric']>[0]);
  }
  let live = true;
  return () => {
    if (!live) return;
    live = false;
    for (const [i, { name }] of families.entries()) {
      if ((promRegistry.getSingleMetric(name) as unknown) === metrics[i]) {
        promRegistry.removeSingleMetric(name);
      }
    }
  };
}
