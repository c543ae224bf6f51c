import type { Clock } from '../../clock/Clock.js';
import { systemClock } from '../../clock/systemClock.js';
import { type ResolvedMetrics, resolveMetrics } from '../../telemetry/metrics.js';
import { boolean, clockOption, string } from '../../validation/validate.js';

/** The options every policy kind takes and resolves alike: its name and its clock. */
export interface ResolvedNamed {
  name: string;
  clock: Clock;
}

/** {@link ResolvedNamed} and `debug`, for the kinds whose refusals can carry detail. */
export interface ResolvedDebugged extends ResolvedNamed {
  debug: boolean;
}

/** {@link ResolvedDebugged} and `metrics`, for the kinds that time their calls. */
export interface ResolvedMeasured extends ResolvedDebugged {
  metrics: ResolvedMetrics;
}

/** The options as given: checked for unknown keys, not yet for their values. */
interface Given {
  readonly name?: unknown;
  readonly clock?: unknown;
  readonly debug?: unknown;
  readonly metrics?: unknown;
}

export const NAMED_KEYS = ['name', 'clock'] as const;
// Written out rather than spread from each other: a spread is kept in every bundle, used or not.
export const DEBUGGED_KEYS = ['name', 'clock', 'debug'] as const;
export const MEASURED_KEYS = ['name', 'clock', 'debug', 'metrics'] as const;

/** Resolves `name` (defaulting to `name`) and `clock` (the system clock) of options `o`. */
export function resolveNamed(o: Given, name: string): ResolvedNamed {
  return { name: string(o.name, 'name', name), clock: clockOption(o.clock, 'clock', systemClock) };
}

/** {@link resolveNamed} and `debug` (off by default). */
export function resolveDebugged(o: Given, name: string): ResolvedDebugged {
  return { ...resolveNamed(o, name), debug: boolean(o.debug, 'debug', false) };
}

/** {@link resolveDebugged} and `metrics`. */
export function resolveMeasured(o: Given, name: string): ResolvedMeasured {
  return {
    name: string(o.name, 'name', name),
    clock: clockOption(o.clock, 'clock', systemClock),
    debug: boolean(o.debug, 'debug', false),
    metrics: resolveMetrics(o.metrics),
  };
}
