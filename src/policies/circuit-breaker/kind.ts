import type { PolicyKindDescriptor } from '../../protocol/kind.js';
import { rejectedSpanEvent } from '../shared/rejectedEvent.js';
import { CircuitBreaker, controllerOf } from './CircuitBreaker.js';
import { breakerDependsOn, breakerSchema } from './config.js';
import type { BreakerCounts } from './counts.js';
import { stateChangeSpanEvent } from './diagnostics.js';
import { BreakerGroup, breakerView } from './keyed.js';
import { breakerMetrics } from './metrics.js';
import {
  type CircuitBreakerOptions,
  type ResolvedBreakerOptions,
  resolveBreakerOptions,
} from './options.js';
import { checkBreakerOptions } from './reconfigure.js';
import type { CircuitBreakerStats } from './stats.js';

/** The circuit breaker kind: what the registry, config data and exporters know of it. */
export const circuitBreakerKind: PolicyKindDescriptor<
  CircuitBreaker,
  ResolvedBreakerOptions,
  BreakerCounts
> = {
  name: 'circuitBreaker',
  label: 'circuit breaker',
  section: 'circuitBreakers',
  is: (value): value is CircuitBreaker => value instanceof CircuitBreaker,
  create: (options) => new CircuitBreaker(options as CircuitBreakerOptions),
  resolve: (data) => resolveBreakerOptions(data as CircuitBreakerOptions),
  reconfigure(breaker, options) {
    const c = controllerOf(breaker);
    checkBreakerOptions(breaker, c, options, options.name);
    return () => c.applyOptions(options);
  },
  dispose: (breaker) => breaker.dispose(),
  view: breakerView,
  config: {
    schema: breakerSchema,
    codeOnly: ['handle', 'handleResult', 'initialState'],
    dependsOn: breakerDependsOn,
  },
  keyed: (name, options, hooks) => new BreakerGroup(name, options, hooks),
  attach(breaker, name, hooks) {
    // A breaker registered in several registries reports its transitions to the last one.
    controllerOf(breaker).events.setSink((_name, event) =>
      hooks.stateChange(name, undefined, event),
    );
  },
  state: (breaker) => breaker.state,
  restState: 'closed',
  health: (state) =>
    state === 'open' || state === 'forced-open'
      ? 'down'
      : state === 'half-open'
        ? 'degraded'
        : 'ok',
  metrics: breakerMetrics,
  spanEvents: [stateChangeSpanEvent, rejectedSpanEvent('circuitBreaker')],
  dashboard({ stats }) {
    const s = stats as CircuitBreakerStats;
    return {
      calls: s.successes + s.failures + s.ignored,
      rejected: s.rejections,
      detail: `${s.failuresInWindow} failed / ${s.callsInWindow} in window${s.slowCallsInWindow ? `, ${s.slowCallsInWindow} slow` : ''}`,
    };
  },
};
