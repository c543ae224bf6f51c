/**
 * Prometheus metrics of a breakwater registry through prom-client (an optional peer
 * dependency: this module only uses the registry object it is given). Names, labels and the
 * keyed-instance cap are listed in docs/observability.md.
 *
 * @example
 * ```ts
 * import { register } from 'prom-client';
 * import { registerBreakwaterMetrics } from 'breakwater/prometheus';
 *
 * const unregister = registerBreakwaterMetrics(register, registry);
 * ```
 * @packageDocumentation
 */
export {
  type PrometheusOptions,
  type PromRegistryLike,
  registerBreakwaterMetrics,
} from './registerBreakwaterMetrics.js';
