import {
  type ConfigSchema,
  configSchema,
  type Duration,
  type MissingOption,
  type MissingOptionContext,
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

/** @internal A timeout's duration, which its defaults may leave to each named entry. */
export function missingTimeout(
  o: OptionsData,
  { entry, defaults, section }: MissingOptionContext,
): MissingOption | undefined {
  if (o.timeout !== undefined) return undefined;
  return {
    option: 'timeout',
    message: entry
      ? `is required: neither this entry nor \`${defaults}\` sets a timeout`
      : `is required: there is no \`${section}\` entry for this name and \`${defaults}\` sets no timeout`,
  };
}
