import { OptionsError } from '../errors/OptionsError.js';
import { MAX_KEY_LENGTH } from '../validation/validate.js';

/**
 * @internal A name or prefix that goes into Redis keys: a string of `min` to
 * {@link MAX_KEY_LENGTH} characters (the cap on keys, so no option makes every key and
 * reply megabytes long) without `{` or `}` (they would move the hash tag).
 */
export function keyPartOption(value: unknown, path: string, fallback: string, min: 0 | 1): string {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'string' ||
    value.length < min ||
    value.length > MAX_KEY_LENGTH ||
    value.includes('{') ||
    value.includes('}')
  ) {
    const size = min === 0 ? `at most ${MAX_KEY_LENGTH}` : `1 to ${MAX_KEY_LENGTH}`;
    throw new OptionsError(path, value, `a string of ${size} characters without \`{\` or \`}\``);
  }
  return value;
}
