/** Wording shared by the scenarios' readings and miss notes (see lib/readings.mjs). */
import { fmtBytes, fmtNs, fmtRatio } from './report.mjs';

export const ns = (x) => `${fmtNs(x)} ns`;
export const bytes = (x) => `${fmtBytes(x)} B`;
export const plus = (x, f) => (x < 0 ? f(x) : `+${f(x)}`);
export const over = (r) => `${plus(r.overheadNs, ns)} and ${plus(r.overheadBytes, bytes)}`;
export const ms = (x) => `${(x / 1e6).toFixed(1)} ms`;

/** Row lookup for the reading: `get(scenario, library, variant)`. */
export function finder(report) {
  return (scenario, library, variant) =>
    report.rows.find(
      (r) => r.scenario === scenario && r.library === library && r.variant === variant,
    );
}

/** "cockatiel 4 +123 ns, cockatiel 3 +130 ns" for the rows that exist. */
export function list(items, f) {
  return items
    .filter(([, r]) => r !== undefined)
    .map(([name, r]) => `${name} ${f(r)}`)
    .join(', ');
}

/**
 * "+X ns and +Y B; the same pipeline called directly with a closure per call ..." for a
 * decorated row and its `versus` row.
 */
export function decoratedText(decorated, direct) {
  let s = over(decorated);
  if (direct) {
    s +=
      `; the same pipeline called directly with a closure per call (\`p.execute(() => service.call())\` on the ` +
      `undecorated method, what code without decorators writes) adds ${over(direct)}, so the decorator costs ` +
      `${plus(decorated.versusNs, ns)} and ${plus(decorated.versusBytes, bytes)} over it`;
  }
  return s;
}

export const ratio = (a, b) =>
  a && b && b.overheadNs > 0 ? fmtRatio(a.overheadNs / b.overheadNs) : '–';
