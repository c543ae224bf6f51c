import { OptionsError } from '../../errors/OptionsError.js';
import { checkMetricsKept } from '../../telemetry/metrics.js';
import { checkIdentity } from '../shared/reconfigure.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import type { CircuitController } from './CircuitController.js';
import type { ResolvedBreakerOptions } from './options.js';

/**
 * @internal Throws {@link OptionsError} when resolved options `o` cannot replace those of
 * breaker `b`, controlled by `c`, under `name` (another name or clock, an initial state,
 * slow-call tracking turned on).
 */
export function checkBreakerOptions(
  b: CircuitBreaker,
  c: CircuitController,
  o: ResolvedBreakerOptions,
  name: string,
): void {
  checkIdentity('breaker', b.name, b.clock, name, o.clock);
  if (o.initialState !== undefined) {
    throw new OptionsError(
      'initialState',
      o.initialState,
      'unset: the initial state is only read when the breaker is built',
    );
  }
  if (!b.needsDuration && o.slowCallDuration !== Number.POSITIVE_INFINITY) {
    throw new OptionsError(
      'slowCallDuration',
      o.slowCallDuration,
      'unset: slow-call tracking cannot be turned on for a breaker built without it (pipelines built with it do not time calls); build a new breaker',
    );
  }
  checkMetricsKept(c.options.metrics, o.metrics);
}
