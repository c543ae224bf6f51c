import type { KindChannel, KindSpanEvent, SpanEventAttributes } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

const CHANNEL = 'breakwater:circuit-breaker:state-change';

/** @internal The channel of state changes, as `diagnosticsChannels` and the docs list it. */
export const stateChangeKindChannel: KindChannel = {
  key: 'stateChange',
  channel: CHANNEL,
  message:
    '`{ name, from, to, reason, generation, failureRate, slowCallRate, callsInWindow, breakDuration }`',
};

/** @internal */
export const stateChangeChannel: Channel = /* @__PURE__ */ diagnosticsChannel(CHANNEL);

/** @internal The span event of a breaker's state change. */
export const STATE_CHANGE_EVENT = 'breakwater.circuit_breaker.state_change';

/** @internal A state change as a span event (see `traceBreakwaterEvents`). */
export const stateChangeSpanEvent: KindSpanEvent = {
  channel: CHANNEL,
  name: STATE_CHANGE_EVENT,
  key: 'stateChange',
  doc: "`breakwater.policy.name`, `breakwater.circuit_breaker.from`, `.to`, `.reason` (`failure-rate`, `slow-call-rate`, `consecutive-failures`, `consecutive-slow-calls`, `break-elapsed`, `probes-succeeded`, `probes-failed`, `half-open-timeout`, `manual`, `shared-open`), `.generation`; on opening from closed `.calls_in_window` (a consecutive window's failures or slow calls in a row), with a count or time window `.failure_rate`, `.slow_call_rate` (0 to 1); on opening `.break_duration_ms`",
  attributes(m) {
    const a: SpanEventAttributes = {
      'breakwater.policy.name': String(m.name),
      'breakwater.circuit_breaker.from': String(m.from),
      'breakwater.circuit_breaker.to': String(m.to),
      'breakwater.circuit_breaker.reason': String(m.reason),
      'breakwater.circuit_breaker.generation': m.generation as number,
    };
    // The rates are NaN unless a rate window opened the breaker from closed; the calls counted
    // (a consecutive window's run) are 0 unless a window opened it.
    if (Number.isFinite(m.failureRate)) {
      a['breakwater.circuit_breaker.failure_rate'] = m.failureRate as number;
      a['breakwater.circuit_breaker.slow_call_rate'] = m.slowCallRate as number;
    }
    if ((m.callsInWindow as number) > 0) {
      a['breakwater.circuit_breaker.calls_in_window'] = m.callsInWindow as number;
    }
    if ((m.breakDuration as number) > 0) {
      a['breakwater.circuit_breaker.break_duration_ms'] = m.breakDuration as number;
    }
    return a;
  },
};
