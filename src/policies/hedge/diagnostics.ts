import type { KindChannel } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

const CHANNEL = 'breakwater:hedge';

/**
 * @internal The channel of hedges, published as each starts, as `diagnosticsChannels` and the
 * docs list it. It makes no span event: a hedge on a delay starts from the policy's one timer,
 * outside the async context of its call.
 */
export const hedgeKindChannel: KindChannel = {
  key: 'hedge',
  channel: CHANNEL,
  message:
    "`{ name, hedge, reason }`: a hedge started (`hedge` 1 for the first; `reason` `delay`, `failure`, or `pushback` when the wait a failure's server pushback asked for passed)",
};

/** @internal */
export const hedgeChannel: Channel = /* @__PURE__ */ diagnosticsChannel(CHANNEL);
