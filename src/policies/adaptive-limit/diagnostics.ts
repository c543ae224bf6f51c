import { type Channel, diagnosticsChannel } from '../../telemetry/channels.js';

/** @internal The channel of limit changes: a `LimitChangeEvent`. */
export const LIMIT_CHANGE_CHANNEL = 'breakwater:adaptive-limit:change';

/** @internal */
export const limitChangeChannel: Channel = /* @__PURE__ */ diagnosticsChannel(LIMIT_CHANGE_CHANNEL);
