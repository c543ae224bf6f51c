/** Small statistics used by both the measuring child processes and the runner. */

export function median(values) {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function min(values) {
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

export function max(values) {
  return values.length === 0 ? Number.NaN : Math.max(...values);
}

/** Rounds to `digits` decimals, keeping the value a number (for the JSON report). */
export function round(value, digits = 1) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
