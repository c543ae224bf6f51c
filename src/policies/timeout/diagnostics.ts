import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

/**
 * @internal The channel of passed deadlines. It makes no span event: one timer serves all the
 * calls of a timeout, so it fires outside the async context of the call it ends.
 */
export const TIMEOUT_CHANNEL = 'breakwater:timeout';

/** @internal */
export const timeoutChannel: Channel = /* @__PURE__ */ diagnosticsChannel(TIMEOUT_CHANNEL);
