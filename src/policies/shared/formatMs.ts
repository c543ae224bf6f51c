/** @internal A duration in ms for people: `0.25 ms`, `12.5 ms`, `250 ms`, `12.5 s`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '\u2013';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 10000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}
