import { type ConfigSchema, configSchema, type Duration } from '../../protocol/kind.js';

/** A hedge policy's options as config data. */
export interface HedgeConfig {
  readonly maxHedges?: number;
  /**
   * A fixed delay (ms or `"200ms"`), `"on-failure"`, or a live percentile of observed latency
   * (`{ "percentile": 0.95, "minSamples": 100, "window": "5s" }`).
   */
  readonly delay?:
    | Duration
    | 'on-failure'
    | { readonly percentile: number; readonly minSamples?: number; readonly window?: Duration };
  readonly maxPushback?: Duration;
}

/** @internal The keys of a hedge policy's options in config data. */
export const hedgeSchema: ConfigSchema = configSchema([
  ['maxHedges', 'value'],
  // A duration, a word or an object: the policy's own check reads each form.
  ['delay', 'value'],
  ['maxPushback', 'duration'],
]);
