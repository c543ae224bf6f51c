/**
 * The clean vs polluted profile: each polluted row (its `cleanOf` names the scenario it repeats
 * after the same policy first ran eleven other targets) beside its clean counterpart, and what
 * the doc shows of them.
 */
import { fmtBytes, fmtNs, md } from './report.mjs';
import { round } from './stats.mjs';

const figures = (r) => ({
  scenario: r.scenario,
  library: r.library,
  nsPerOp: r.nsPerOp,
  overheadNs: r.overheadNs,
  bytesPerOp: r.bytesPerOp,
});

/** Polluted rows next to their clean counterparts (same variant, the `cleanOf` scenario). */
export function pollution(rows) {
  return rows
    .filter((r) => r.cleanOf !== null)
    .map((p) => {
      const c = rows.find(
        (r) => r.scenario === p.cleanOf && r.library === p.library && r.variant === p.variant,
      );
      return {
        library: p.library,
        variant: p.variant,
        clean: c ? figures(c) : null,
        polluted: figures(p),
        changePct: c ? round(((p.nsPerOp - c.nsPerOp) / c.nsPerOp) * 100, 1) : null,
      };
    });
}

const compared = (report) => report.pollution.filter((p) => p.clean !== null);
const change = (p, digits) => `${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(digits)} %`;

/** The doc's section comparing the profiles (ending in a blank line), or nothing. */
export function pollutionSection(report) {
  const lines = compared(report).map(
    (p) =>
      `| ${p.library} | ${md(p.variant)} | ${fmtNs(p.clean.nsPerOp)} | ${fmtNs(p.polluted.nsPerOp)} | ` +
      `${change(p, 1)} | ` +
      `${fmtNs(p.clean.overheadNs)} → ${fmtNs(p.polluted.overheadNs)} | ${fmtBytes(p.clean.bytesPerOp)} → ${fmtBytes(p.polluted.bytesPerOp)} |`,
  );
  if (lines.length === 0) return '';
  return `## Clean vs polluted profile

Polluted: before measuring, the same policy (for opossum, eleven breakers sharing its code) ran eleven different
targets 3000 rounds over: async and sync, different return types, a bound method, a \`new Promise\` factory.

| library | row | clean ns/op | polluted ns/op | change | Δ ns over bare, clean → polluted | B/op clean → polluted |
|---|---|---:|---:|---:|---:|---:|
${lines.join('\n')}

`;
}

/** The reading's paragraph on the polluted profiles, or undefined when none was compared. */
export function pollutionReading(report) {
  const changes = compared(report);
  if (changes.length === 0) return undefined;
  const big = changes.filter((p) => Math.abs(p.changePct) >= 10);
  return (
    'After the same policy has first run eleven different targets (a “polluted” profile), ' +
    (big.length === 0
      ? 'no row changes by 10 % or more.'
      : `these rows change by 10 % or more: ${big
          .map((p) => `${p.clean.scenario}: ${p.library} ${p.variant} ${change(p, 0)}`)
          .join(', ')}.`) +
    ' Compare each change with the rows’ spreads before reading it as more than noise.'
  );
}
