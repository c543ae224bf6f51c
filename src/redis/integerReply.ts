/**
 * @internal An integer reply as a number: clients give numbers, but a client told to map
 * integers to strings or bigints (node-redis `typeMapping`) is served too. NaN for anything else.
 */
export function integerOf(value: unknown): number {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : Number.NaN;
  if (typeof value === 'bigint' || (typeof value === 'string' && /^-?\d+$/.test(value))) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : Number.NaN;
  }
  return Number.NaN;
}
