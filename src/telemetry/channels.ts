/**
 * `node:diagnostics_channel` channels the policies publish to, so APM tools can hook in. They
 * are looked up through `process.getBuiltinModule`, never imported, so the core still loads
 * where there is no such module (browsers, edge runtimes): there every channel is a stand-in
 * that never has subscribers. Publishers check `hasSubscribers` first, so a channel nobody
 * listens to costs one property read and no message object.
 */

/** @internal The part of a diagnostics channel the policies use. */
export interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** Names of the channels breakwater publishes to. */
export const diagnosticsChannels = {
  /**
   * A circuit breaker changed state: `{ name, from, to, reason, generation, failureRate,
   * slowCallRate, callsInWindow, breakDuration }`.
   */
  stateChange: 'breakwater:circuit-breaker:state-change',
  /**
   * A breaker, bulkhead or rate limiter refused a call: `{ kind: 'circuitBreaker' | 'bulkhead'
   * | 'rateLimiter', name, reason, error }`.
   */
  rejected: 'breakwater:rejected',
  /** A retry policy is about to wait and try again: `{ name, attempt, delay, error }`. */
  retry: 'breakwater:retry',
  /** A timeout policy's deadline passed: `{ name, timeout }`. */
  timeout: 'breakwater:timeout',
} as const;

const SILENT: Channel = { hasSubscribers: false, publish() {} };

function lookUp(name: string): Channel {
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  if (typeof host?.getBuiltinModule !== 'function') return SILENT;
  try {
    const dc = host.getBuiltinModule('node:diagnostics_channel') as
      | { channel?: (name: string) => Channel }
      | undefined;
    return typeof dc?.channel === 'function' ? dc.channel(name) : SILENT;
  } catch {
    return SILENT;
  }
}

/** @internal */
export const stateChangeChannel: Channel = /* @__PURE__ */ lookUp(diagnosticsChannels.stateChange);
/** @internal */
export const rejectedChannel: Channel = /* @__PURE__ */ lookUp(diagnosticsChannels.rejected);
/** @internal */
export const retryChannel: Channel = /* @__PURE__ */ lookUp(diagnosticsChannels.retry);
/** @internal */
export const timeoutChannel: Channel = /* @__PURE__ */ lookUp(diagnosticsChannels.timeout);
