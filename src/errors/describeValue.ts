/** @internal A value as it appears in messages: strings quoted (a long one by its length and start), objects named by kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    // A hostile value (a megabyte key) must not make a megabyte message.
    return value.length > 80
      ? `a string of ${value.length} characters starting ${JSON.stringify(value.slice(0, 40))}`
      : JSON.stringify(value);
  }
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  return String(value);
}
