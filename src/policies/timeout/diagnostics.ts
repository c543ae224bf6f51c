import type { KindChannel } from '../../protocol/kind.js';
import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

const CHANNEL = 'breakwater:timeout';

/**
 * @internal The channel of passed deadlines, as `diagnosticsChannels` and the docs list it. It
 * makes no span event: one timer serves all the calls of a timeout, so it fires outside the
 * async context of the call it ends.
 */
export const timeoutKindChannel: KindChannel = {
  key: 'timeout',
  channel: CHANNEL,
  message: '`{ name, timeout }`',
};

/** @internal */
export const timeoutChannel: Channel = /* @__PURE__ */ diagnosticsChannel(CHANNEL);
