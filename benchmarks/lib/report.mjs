/** Turns the child processes' outputs into report rows, a console table and markdown. */
import { verdict } from './budgets.mjs';
import { max, median, min, round } from './stats.mjs';

const METHOD_LABEL = { 'await-loop': 'await loop', mitata: 'mitata' };

function findRow(output, variant) {
  const row = output.rows.find((r) => r.variant === variant);
  if (row === undefined) throw new Error(`${output.scenario}: no row "${variant}" in a run`);
  return row;
}

/**
 * One report row per (scenario, variant).
 * - nsPerOp: median over time processes of each process's own figure.
 * - nsSpread: min–max of those per-process figures; with a single process, min–max of its
 *   batches (await loop) or samples (mitata).
 * - overheadNs / overheadBytes: median over processes of (row - baseline row) within the same
 *   process, so load that slows a whole process cancels out.
 */
export function aggregate(scenarios) {
  const rows = [];
  for (const s of scenarios) {
    for (const proto of s.time[0].rows) {
      const { variant, baseline } = proto;
      const times = s.time.map((o) => findRow(o, variant));
      const allocs = s.alloc.map((o) => findRow(o, variant));
      const ns = times.map((r) => r.nsPerOp);
      const nsSpread = times.length > 1 ? [min(ns), max(ns)] : [times[0].nsMin, times[0].nsMax];
      const paired = (outputs, field) =>
        baseline === null
          ? 0
          : median(outputs.map((o) => findRow(o, variant)[field] - findRow(o, baseline)[field]));
      rows.push({
        scenario: s.id,
        library: proto.library,
        variant,
        nsPerOp: round(median(ns), 1),
        nsSpread: nsSpread.map((x) => round(x, 1)),
        bytesPerOp: round(median(allocs.map((r) => r.bytesPerOp)), 1),
        overheadNs: round(paired(s.time, 'nsPerOp'), 1),
        overheadBytes: round(paired(s.alloc, 'bytesPerOp'), 1),
        method: proto.method,
        baseline,
        cleanOf: proto.cleanOf,
        timeRuns: times.length,
        allocRuns: allocs.length,
        allocCalls: allocs[0]?.calls ?? null,
      });
    }
  }
  return rows;
}

const figures = (r) => ({
  scenario: r.scenario,
  nsPerOp: r.nsPerOp,
  overheadNs: r.overheadNs,
  bytesPerOp: r.bytesPerOp,
});

/** Polluted rows next to their clean counterparts (same variant, the `cleanOf` scenario). */
export function pollution(rows) {
  return rows
    .filter((r) => r.cleanOf !== null)
    .map((p) => {
      const c = rows.find((r) => r.scenario === p.cleanOf && r.variant === p.variant);
      return {
        variant: p.variant,
        clean: c ? figures(c) : null,
        polluted: figures(p),
        changePct: c ? round(((p.nsPerOp - c.nsPerOp) / c.nsPerOp) * 100, 1) : null,
      };
    });
}

// ---- formatting -----------------------------------------------------------------------------

export function fmtNs(x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '–';
  return Math.abs(x) < 1000 ? x.toFixed(1) : x.toFixed(0);
}

export function fmtBytes(x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return '–';
  const r = Math.round(x);
  return String(Object.is(r, -0) ? 0 : r);
}

const signed = (s) => (s.startsWith('-') || s === '0' || s === '0.0' || s === '–' ? s : `+${s}`);

function cells(r) {
  const bare = r.baseline === null;
  return [
    r.scenario,
    r.library,
    r.variant,
    METHOD_LABEL[r.method] ?? r.method,
    fmtNs(r.nsPerOp),
    `${fmtNs(r.nsSpread[0])}–${fmtNs(r.nsSpread[1])}`,
    bare ? '' : signed(fmtNs(r.overheadNs)),
    fmtBytes(r.bytesPerOp),
    bare ? '' : signed(fmtBytes(r.overheadBytes)),
  ];
}

const HEAD = [
  'scenario',
  'library',
  'variant',
  'time by',
  'ns/op',
  'spread',
  'Δ ns',
  'B/op',
  'Δ B',
];
const RIGHT = [false, false, false, false, true, true, true, true, true];

function limitText(c) {
  const what = c.metric.startsWith('overhead') ? 'over bare ' : '';
  const value = c.unit === 'B' ? fmtBytes(c.value) : fmtNs(c.value);
  return `${what}${value} ${c.unit} (<= ${c.limit} ${c.unit})`;
}

export function consoleReport({ rows, budgets, pollution: polluted, meta }) {
  const body = rows.map(cells);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r) =>
    r.map((c, i) => (RIGHT[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  const out = [];
  out.push(
    `breakwater ${meta.library.version} · Node ${meta.machine.node} (V8 ${meta.machine.v8}) · ` +
      `${meta.machine.cpu} × ${meta.machine.cores} · ${meta.machine.os}`,
  );
  out.push(
    `time: ${meta.settings.runs} process(es) per scenario · allocation: ${meta.settings.allocRuns} ` +
      `process(es) per scenario · load average ${meta.loadAverage.start} -> ${meta.loadAverage.end} ` +
      `on ${meta.machine.cores} cores` +
      `${meta.settings.quick ? ' · QUICK (a few iterations: figures are not meaningful)' : ''}`,
  );
  out.push('');
  out.push(line(HEAD));
  out.push(line(widths.map((w) => '-'.repeat(w))));
  let last;
  for (let i = 0; i < body.length; i++) {
    if (last !== undefined && rows[i].scenario !== last) out.push('');
    last = rows[i].scenario;
    out.push(line(body[i]));
  }
  out.push('');
  out.push('Budgets');
  for (const b of budgets) {
    const detail =
      b.pass === null ? 'not measured in this run' : b.checks.map(limitText).join(', ');
    out.push(`  ${verdict(b.pass).padEnd(4)}  ${b.label}: ${detail}`);
  }
  if (polluted.length > 0) {
    out.push('');
    out.push('Clean vs polluted profile (ns/op, B/op)');
    for (const p of polluted) {
      if (p.clean === null) continue;
      out.push(
        `  ${p.clean.scenario} / ${p.variant}: ${fmtNs(p.clean.nsPerOp)} -> ${fmtNs(p.polluted.nsPerOp)} ns ` +
          `(${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(1)} %; over bare ` +
          `${fmtNs(p.clean.overheadNs)} -> ${fmtNs(p.polluted.overheadNs)} ns), ` +
          `${fmtBytes(p.clean.bytesPerOp)} -> ${fmtBytes(p.polluted.bytesPerOp)} B`,
      );
    }
  }
  return out.join('\n');
}

// ---- markdown -------------------------------------------------------------------------------

const md = (s) => s.replaceAll('|', '\\|');

export function markdownTable(rows) {
  const out = [`| ${HEAD.join(' | ')} |`, `|${RIGHT.map((r) => (r ? '---:' : '---')).join('|')}|`];
  for (const r of rows) {
    out.push(`| ${cells(r).map(md).join(' | ')} |`);
  }
  return out.join('\n');
}

export function markdownBudgets(budgets) {
  const out = ['| budget | row | measured | limit | verdict |', '|---|---|---:|---:|---|'];
  for (const b of budgets) {
    for (const c of b.checks) {
      const measured = c.unit === 'B' ? fmtBytes(c.value) : fmtNs(c.value);
      const what = c.metric.startsWith('overhead') ? ' over bare' : '';
      out.push(
        `| ${md(b.label)} | ${b.scenario} / ${md(b.variant)} | ${measured} ${c.unit}${what} | ` +
          `<= ${c.limit} ${c.unit} | **${verdict(c.pass)}** |`,
      );
    }
  }
  return out.join('\n');
}
