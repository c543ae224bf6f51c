import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

/**
 * @internal The channel of hedges, published as each starts: `{ name, hedge, reason }`. It
 * makes no span event: a hedge on a delay starts from the policy's one timer, outside the
 * async context of its call.
 */
export const HEDGE_CHANNEL = 'breakwater:hedge';

/** @internal */
export const hedgeChannel: Channel = /* @__PURE__ */ diagnosticsChannel(HEDGE_CHANNEL);
