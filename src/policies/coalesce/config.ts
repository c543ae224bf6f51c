import { type ConfigSchema, configSchema } from '../../protocol/kind.js';

/** A coalescing policy's options as config data (`share` is set in code only). */
export interface CoalesceConfig {
  readonly enabled?: boolean;
}

/** @internal The keys of a coalescing policy's options in config data. */
export const coalesceSchema: ConfigSchema = configSchema([['enabled', 'value']]);
