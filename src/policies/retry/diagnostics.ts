import type { KindChannel, KindSpanEvent, SpanEventAttributes } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

const CHANNEL = 'breakwater:retry';

/**
 * @internal The channel of retries, published before each wait, as `diagnosticsChannels` and
 * the docs list it.
 */
export const retryKindChannel: KindChannel = {
  key: 'retry',
  channel: CHANNEL,
  message:
    '`{ name, attempt, delay, error }` (`error` is the result when a result caused the retry)',
};

/** @internal */
export const retryChannel: Channel = /* @__PURE__ */ diagnosticsChannel(CHANNEL);

/** @internal The span event of a retry. */
export const RETRY_EVENT = 'breakwater.retry';

/** @internal A retry as a span event (see `traceBreakwaterEvents`). */
export const retrySpanEvent: KindSpanEvent = {
  channel: CHANNEL,
  name: RETRY_EVENT,
  key: 'retry',
  doc: '`breakwater.policy.name`, `breakwater.retry.attempt` (the attempt that failed, from 1), `breakwater.retry.delay_ms`; `exception.type` and `exception.message` when an error (not a result) caused the retry',
  attributes(m) {
    const a: SpanEventAttributes = {
      'breakwater.policy.name': String(m.name),
      'breakwater.retry.attempt': m.attempt as number,
      'breakwater.retry.delay_ms': m.delay as number,
    };
    const error = m.error;
    if (error instanceof Error) {
      a['exception.type'] = error.name;
      a['exception.message'] = error.message;
    }
    return a;
  },
};
