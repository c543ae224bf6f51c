import { OptionsError } from '../errors/OptionsError.js';
import type { Disposer } from '../events/Listeners.js';
import { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import type { StateChangeEvent } from '../policies/circuit-breaker/events.js';
import type { RegistryTransition } from '../policies/kinds.js';
import type { Registry } from '../registry/Registry.js';
import { checkOptionsObject, onlyArguments } from '../validation/validate.js';

/** What a logged transition carries besides its message. */
export interface TransitionLogContext {
  readonly name: string;
  readonly key?: string;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly generation: number;
  /** Failure rate over the window, when the window opened the breaker (absent otherwise). */
  readonly failureRate?: number;
  /** Slow-call rate over the window, when the window opened the breaker (absent otherwise). */
  readonly slowCallRate?: number;
  readonly callsInWindow: number;
  /** How long the breaker stays open (ms), when it opened; else 0. */
  readonly breakDuration: number;
}

/**
 * Where transitions are logged: `console` fits (it is given the message alone, which says
 * everything the context holds). A logger that takes the context first (pino, bunyan) is
 * adapted with `{ warn: (m, c) => log.warn(c, m), info: (m, c) => log.info(c, m) }`.
 */
export interface TransitionLogger {
  /** Logs an opening or a refusal for good (open, half-open, forced-open). */
  warn(message: string, context: TransitionLogContext): void;
  /** Logs the other transitions (closed, disabled, metrics-only). */
  info(message: string, context: TransitionLogContext): void;
}

/** Options of {@link logTransitions}. */
export interface LogTransitionsOptions {
  /** @default console */
  readonly logger?: TransitionLogger;
}

/**
 * Logs every state change of a breaker, or of every breaker of a registry (keyed ones too),
 * with its context: failure rate, slow-call rate and calls in the window when it opened, and
 * the break duration. Openings and refusals-for-good (open, half-open, forced-open) are
 * warnings; the rest (closed, disabled, metrics-only) are info. Each transition is one call
 * of the logger with the message and its context (console gets the message alone). Names and
 * keys are written as JSON strings, so a key from request data cannot forge log lines. Returns
 * a function that stops logging.
 *
 * @example
 * ```ts
 * logTransitions(registry);
 * // breakwater: circuit breaker "payments" closed -> open (failure-rate): failure rate 62.5 %,
 * //   slow-call rate 0.0 %, 16 calls in window, open for 30000 ms
 * ```
 */
export function logTransitions(
  source: Registry | CircuitBreaker,
  options?: LogTransitionsOptions,
): Disposer {
  onlyArguments(arguments, 2, 'logTransitions()');
  const o = checkOptionsObject(options, ['logger'], '');
  const logger = (o.logger ?? console) as TransitionLogger;
  if (typeof logger?.warn !== 'function' || typeof logger.info !== 'function') {
    throw new OptionsError('logger', logger, 'an object with warn and info methods, like console');
  }
  // console prints every argument: the context would follow each line as an object repeating
  // it (with NaN for the rates of most transitions).
  const out = logger === console ? consoleLogger : logger;
  if (source instanceof CircuitBreaker) {
    return source.onStateChange((event) => write(out, source.name, undefined, event));
  }
  return source.onStateChange((t: RegistryTransition) => write(out, t.name, t.key, t));
}

/** console, given the message alone (read at each call, so a replaced method is used). */
const consoleLogger: TransitionLogger = {
  warn: (message) => console.warn(message),
  info: (message) => console.info(message),
};

const WARN_STATES = new Set(['open', 'half-open', 'forced-open']);

function write(
  logger: TransitionLogger,
  name: string,
  key: string | undefined,
  e: StateChangeEvent,
): void {
  const context: TransitionLogContext = {
    name,
    ...(key === undefined ? {} : { key }),
    from: e.from,
    to: e.to,
    reason: e.reason,
    generation: e.generation,
    // NaN (no rate) would reach JSON loggers as null.
    ...(Number.isNaN(e.failureRate) ? {} : { failureRate: e.failureRate }),
    ...(Number.isNaN(e.slowCallRate) ? {} : { slowCallRate: e.slowCallRate }),
    callsInWindow: e.callsInWindow,
    breakDuration: e.breakDuration,
  };
  const details: string[] = [];
  if (!Number.isNaN(e.failureRate)) details.push(`failure rate ${percent(e.failureRate)}`);
  if (!Number.isNaN(e.slowCallRate)) details.push(`slow-call rate ${percent(e.slowCallRate)}`);
  if (e.callsInWindow > 0) details.push(counted(e));
  if (e.to === 'open') details.push(`open for ${e.breakDuration} ms`);
  const who = `circuit breaker ${JSON.stringify(name)}${key === undefined ? '' : ` key ${JSON.stringify(key)}`}`;
  const message = `breakwater: ${who} ${e.from} -> ${e.to} (${e.reason})${details.length > 0 ? `: ${details.join(', ')}` : ''}`;
  if (WARN_STATES.has(e.to)) logger.warn(message, context);
  else logger.info(message, context);
}

/** The calls the window counted: a consecutive window's run, or the calls in a rate window. */
function counted(e: StateChangeEvent): string {
  const n = e.callsInWindow;
  if (!Number.isNaN(e.failureRate)) return `${n} calls in window`;
  if (e.reason === 'consecutive-slow-calls') return `${n} consecutive slow calls`;
  return `${n} consecutive failures`;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)} %`;
}
