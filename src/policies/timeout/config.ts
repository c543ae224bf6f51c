import {
  type ConfigSchema,
  configSchema,
  type Duration,
  type OptionsData,
} from '../../protocol/kind.js';
import { resolveTimeoutOptions, type TimeoutOptions, type TimeoutStrategy } from './options.js';

/** A timeout policy's options as config data. */
export interface TimeoutConfig {
  readonly timeout: Duration;
  readonly strategy?: TimeoutStrategy;
  readonly debug?: boolean;
}

/** @internal The keys of a timeout's options in config data. */
export const timeoutSchema: ConfigSchema = configSchema([
  ['timeout', 'duration'],
  ['strategy', 'value'],
  ['debug', 'value'],
]);

/** @internal Checks options data; defaults may leave the timeout out (a placeholder stands in). */
export function checkTimeoutData(o: OptionsData): void {
  resolveTimeoutOptions({
    ...o,
    timeout: o.timeout === undefined ? 1 : o.timeout,
  } as TimeoutOptions);
}
