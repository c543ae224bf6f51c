import { OptionsError } from '../../errors/OptionsError.js';
import { checkMetricsKept } from '../../telemetry/metrics.js';
import { checkIdentity } from '../shared/reconfigure.js';
import type { CircuitBreaker } from './CircuitBreaker.js';
import { makeWindow, retuneWindow, sameWindowShape } from './makeWindow.js';
import type { ResolvedBreakerOptions } from './options.js';
import { judgeProbes } from './probes.js';
import { S_HALF_OPEN } from './state.js';

/** @internal See {@link CircuitBreaker.checkOptions}. */
export function checkBreakerOptions(
  b: CircuitBreaker,
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
  checkMetricsKept(b.metrics, o.metrics);
}

/** @internal See {@link CircuitBreaker.applyOptions}. */
export function applyBreakerOptions(b: CircuitBreaker, o: ResolvedBreakerOptions): void {
  const sameShape = sameWindowShape(o, b.o);
  b.o = o;
  if (sameShape) retuneWindow(b.window, o);
  else {
    b.window = makeWindow(o);
    b.needsNow = o.windowKind === 'time';
  }
  b.refreshQuiet();
  // Probe outcomes already in are judged against the new counts.
  if (b.s === S_HALF_OPEN && b.probeSuccesses + b.probeFailures > 0) judgeProbes(b);
}
