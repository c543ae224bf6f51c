/** Turns the child processes' outputs into report rows, a console table and markdown tables. */
import { verdict } from './budgets.mjs';
import { max, median, min, round } from './stats.mjs';

const METHOD_LABEL = {
  'await-loop': 'await loop',
  mitata: 'mitata',
  instances: 'instances',
  retained: 'retained',
  memory: 'heap after GC',
};

/** The bare rows a scenario's other rows are measured against. */
export const BARE = 'bare';

function findRow(output, library, variant) {
  const row = output.rows.find((r) => r.library === library && r.variant === variant);
  if (row === undefined) {
    throw new Error(`${output.scenario}: no row "${library} / ${variant}" in a run`);
  }
  return row;
}

/** Sums of the call counts some rows report (calls made, calls that timed out), if any. */
function countsOf(outputs) {
  const out = {};
  for (const field of ['settledCalls', 'timedOutCalls']) {
    const values = outputs.map((o) => o[field]).filter((v) => typeof v === 'number');
    if (values.length > 0) out[field] = values.reduce((a, b) => a + b, 0);
  }
  return out;
}

/** Medians over processes of the figures a memory row reports under `memory`. */
function memoryFigures(outputs) {
  const first = outputs[0]?.memory;
  if (first === undefined) return {};
  const out = {};
  for (const key of Object.keys(first)) {
    out[key] = round(median(outputs.map((o) => o.memory[key])), 1);
  }
  return out;
}

/**
 * One report row per (scenario, variant).
 * - nsPerOp: median over time processes of each process's own figure.
 * - nsSpread: min–max of those per-process figures; with a single process, min–max of its
 *   batches (await loop) or samples (mitata).
 * - overheadNs / overheadBytes: median over processes of (row - baseline row) within the same
 *   process, so load that slows a whole process cancels out.
 * - versusNs / versusBytes: the row against the row of the same library named by `versus`
 *   (e.g. a decorated method against the same pipeline called directly), or null: the median
 *   over processes of each time process's difference measured in alternating batches, and
 *   of each allocation process's difference.
 * - Memory scenarios have no time processes: their rows time themselves in the allocation
 *   processes, and the figures they report under `memory` are added to the row.
 */
export function aggregate(scenarios) {
  const rows = [];
  for (const s of scenarios) {
    const timing = s.time.length > 0 ? s.time : s.alloc;
    for (const proto of timing[0].rows) {
      const { library, variant, baseline } = proto;
      const versus = proto.versus ?? null;
      const times = timing.map((o) => findRow(o, library, variant));
      const allocs = s.alloc.map((o) => findRow(o, library, variant));
      const ns = times.map((r) => r.nsPerOp);
      const nsSpread = times.length > 1 ? [min(ns), max(ns)] : [times[0].nsMin, times[0].nsMax];
      const paired = (outputs, field, otherLibrary, otherVariant) =>
        median(
          outputs.map(
            (o) =>
              findRow(o, library, variant)[field] - findRow(o, otherLibrary, otherVariant)[field],
          ),
        );
      const overhead = (outputs, field) =>
        baseline === null ? 0 : paired(outputs, field, BARE, baseline);
      const against = (outputs, field) =>
        versus === null ? null : round(paired(outputs, field, library, versus), 1);
      // Timed against its `versus` row in alternating batches where the process did (time runs).
      const versusNs =
        versus !== null && times.every((r) => typeof r.versusNs === 'number')
          ? round(median(times.map((r) => r.versusNs)), 1)
          : against(timing, 'nsPerOp');
      rows.push({
        scenario: s.id,
        library,
        variant,
        nsPerOp: round(median(ns), 1),
        nsSpread: nsSpread.map((x) => round(x, 1)),
        bytesPerOp: round(median(allocs.map((r) => r.bytesPerOp)), 1),
        overheadNs: round(overhead(timing, 'nsPerOp'), 1),
        overheadBytes: round(overhead(s.alloc, 'bytesPerOp'), 1),
        versus,
        versusNs,
        versusBytes: against(s.alloc, 'bytesPerOp'),
        method: proto.method,
        allocMethod: allocs[0]?.method ?? null,
        opsPerCall: proto.opsPerCall ?? 1,
        baseline,
        cleanOf: proto.cleanOf,
        timeRuns: s.time.length,
        allocRuns: allocs.length,
        allocCalls: allocs[0]?.calls ?? null,
        ...countsOf([...times, ...allocs]),
        ...memoryFigures(allocs),
      });
    }
  }
  return rows;
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

export function fmtRatio(x) {
  if (x === Number.POSITIVE_INFINITY) return '∞';
  if (typeof x !== 'number' || !Number.isFinite(x)) return '–';
  return x < 10 ? `${x.toFixed(2)}×` : `${x.toFixed(1)}×`;
}

export function fmtValue(x, unit) {
  if (unit === 'B') return fmtBytes(x);
  if (unit === '%') return typeof x === 'number' && Number.isFinite(x) ? x.toFixed(1) : '–';
  return fmtNs(x);
}

const signed = (s) => (s.startsWith('-') || s === '0' || s === '0.0' || s === '–' ? s : `+${s}`);

/** Rows whose bytes are kept (after a full GC) rather than allocated per call. */
const isInstances = (r) =>
  r.method === 'instances' || r.allocMethod === 'retained' || r.method === 'memory';

function cells(r, withScenario) {
  const bare = r.baseline === null;
  const out = [
    r.library,
    r.variant,
    METHOD_LABEL[r.method] ?? r.method,
    fmtNs(r.nsPerOp),
    `${fmtNs(r.nsSpread[0])}–${fmtNs(r.nsSpread[1])}`,
    bare ? '' : signed(fmtNs(r.overheadNs)),
    `${fmtBytes(r.bytesPerOp)}${isInstances(r) ? ' kept' : ''}`,
    bare ? '' : signed(fmtBytes(r.overheadBytes)),
  ];
  return withScenario ? [r.scenario, ...out] : out;
}

const HEAD = ['library', 'variant', 'time by', 'ns/op', 'spread', 'Δ ns', 'B/op', 'Δ B'];
const RIGHT = [false, false, false, true, true, true, true, true];

/** Rows reported as not measured (a feature the library does not have yet). */
function absentCells(a, withScenario) {
  const out = [a.library, a.reason, '', '–', '', '', '–', ''];
  return withScenario ? [a.scenario, ...out] : out;
}

function limitText(c) {
  if (c.over) {
    if (c.value === null) return `over ${c.over}: not measured`;
    return `${signed(fmtValue(c.value, c.unit))} ${c.unit} over ${c.over} (<= +${c.limit} ${c.unit})`;
  }
  const what = c.metric.startsWith('overhead') ? 'over bare ' : '';
  return `${what}${fmtValue(c.value, c.unit)} ${c.unit} (<= ${c.limit} ${c.unit})`;
}

function versusText(b, c) {
  if (c.pass === null) return `${c.scenario}: not measured`;
  return `${c.scenario} ${signed(fmtValue(c.value, b.unit))} ${b.unit} (<= +${b.limit} ${b.unit})`;
}

function ratioText(b, c) {
  if (c.pass === null) return `vs ${c.against}: not measured`;
  return (
    `vs ${c.against} ${fmtValue(c.peer, b.unit)} / ${fmtValue(c.ours, b.unit)} ${b.unit} = ` +
    `${fmtRatio(c.ratio)} (>= ${b.minRatio}×)`
  );
}

/** One line of detail per budget, for the console. */
export function budgetDetail(b) {
  if (b.kind === 'na') return b.reason;
  if (b.pass === null && b.checks.every((c) => c.pass === null)) return 'not measured in this run';
  if (b.kind === 'ratio') return b.checks.map((c) => ratioText(b, c)).join('; ');
  if (b.kind === 'versus') {
    const against = b.checks.find((c) => c.against !== null)?.against;
    return (
      b.checks.map((c) => versusText(b, c)).join(', ') + (against ? ` over \`${against}\`` : '')
    );
  }
  return b.checks.map(limitText).join(', ');
}

export function consoleReport({ rows, absent, budgets, pollution: polluted, meta }) {
  const HEADS = ['scenario', ...HEAD];
  const RIGHTS = [false, ...RIGHT];
  const body = [];
  const scenarioOf = [];
  for (const r of rows) {
    body.push(cells(r, true));
    scenarioOf.push(r.scenario);
  }
  for (const a of absent) {
    // Right after the last row of its scenario.
    const at = scenarioOf.lastIndexOf(a.scenario) + 1 || body.length;
    body.splice(at, 0, absentCells(a, true));
    scenarioOf.splice(at, 0, a.scenario);
  }
  const widths = HEADS.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r) =>
    r.map((c, i) => (RIGHTS[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  const out = [];
  out.push(
    `breakwater ${meta.library.version} · Node ${meta.machine.node} (V8 ${meta.machine.v8}) · ` +
      `${meta.machine.cpu} × ${meta.machine.cores} · ${meta.machine.os}`,
  );
  out.push(
    `peers: ${Object.entries(meta.versions)
      .filter(([name]) => name !== 'mitata')
      .map(([name, v]) => `${name} ${v}`)
      .join(', ')}`,
  );
  out.push(
    `time: ${meta.settings.runs} process(es) per scenario · allocation: ${meta.settings.allocRuns} ` +
      `process(es) per scenario · load average ${meta.loadAverage.start} -> ${meta.loadAverage.end} ` +
      `on ${meta.machine.cores} cores` +
      `${meta.settings.quick ? ' · QUICK (a few iterations: figures are not meaningful)' : ''}`,
  );
  out.push('');
  out.push(line(HEADS));
  out.push(line(widths.map((w) => '-'.repeat(w))));
  let last;
  for (let i = 0; i < body.length; i++) {
    if (last !== undefined && scenarioOf[i] !== last) out.push('');
    last = scenarioOf[i];
    out.push(line(body[i]));
  }
  out.push('');
  out.push('Budgets');
  for (const b of budgets) {
    out.push(`  ${verdict(b.pass).padEnd(4)}  ${b.label}: ${budgetDetail(b)}`);
  }
  if (polluted.length > 0) {
    out.push('');
    out.push('Clean vs polluted profile (ns/op, B/op)');
    for (const p of polluted) {
      if (p.clean === null) continue;
      out.push(
        `  ${p.clean.scenario} / ${p.library} / ${p.variant}: ${fmtNs(p.clean.nsPerOp)} -> ` +
          `${fmtNs(p.polluted.nsPerOp)} ns (${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(1)} %; ` +
          `over bare ${fmtNs(p.clean.overheadNs)} -> ${fmtNs(p.polluted.overheadNs)} ns), ` +
          `${fmtBytes(p.clean.bytesPerOp)} -> ${fmtBytes(p.polluted.bytesPerOp)} B`,
      );
    }
  }
  return out.join('\n');
}

// ---- markdown -------------------------------------------------------------------------------

export const md = (s) => String(s).replaceAll('|', '\\|');

/** The table of one scenario (its rows, then libraries it has no row for). */
export function markdownTable(rows, absent = []) {
  const out = [`| ${HEAD.join(' | ')} |`, `|${RIGHT.map((r) => (r ? '---:' : '---')).join('|')}|`];
  for (const r of rows) out.push(`| ${cells(r, false).map(md).join(' | ')} |`);
  for (const a of absent) out.push(`| ${absentCells(a, false).map(md).join(' | ')} |`);
  return out.join('\n');
}

/** A section per scenario with rows: its title and id, then its table. */
export function markdownResults(report) {
  const out = [];
  for (const s of report.scenarios) {
    const rows = report.rows.filter((r) => r.scenario === s.id);
    const absent = report.absent.filter((a) => a.scenario === s.id);
    if (rows.length === 0) continue;
    out.push(`### ${s.title} (\`${s.id}\`)\n\n${markdownTable(rows, absent)}`);
  }
  return out.join('\n\n');
}

/**
 * The placeholders of benchmarks/page.md for the budgets (see lib/doc.mjs), by name: the budgets
 * against the peers (ratios, or n/a) and breakwater's own (limits, and rows against other rows).
 */
export function budgetSections(budgets) {
  const peer = budgets.filter((b) => b.kind === 'ratio' || b.kind === 'na');
  const own = budgets.filter((b) => b.kind === 'limit' || b.kind === 'versus');
  return {
    peerSummary: budgetSummary(peer),
    peerBudgets: markdownBudgets(peer),
    nearMisses: nearMisses(peer),
    ownSummary: budgetSummary(own),
    ownBudgets: markdownLimits(own),
  };
}

/** "PASS: label · MISS: label · ...". */
function budgetSummary(budgets) {
  return budgets.map((b) => `${verdict(b.pass)}: ${b.label}`).join(' · ');
}

/**
 * Failed ratio checks that came within 10 % of the ratio needed, as a paragraph set off by
 * blank lines, or nothing.
 */
function nearMisses(budgets) {
  const near = [];
  for (const b of budgets) {
    if (b.kind !== 'ratio') continue;
    for (const c of b.checks) {
      if (c.pass === false && c.ratio >= b.minRatio * 0.9) {
        near.push(`${b.label}, vs ${c.against} (${fmtRatio(c.ratio)} of ${b.minRatio}×)`);
      }
    }
  }
  if (near.length === 0) return '';
  return `\nNear misses, within 10 % of the ratio needed: ${near.join('; ')}. The spreads of the rows involved are wider than\nthat gap, so another run may judge these either way.\n`;
}

function markdownBudgets(budgets) {
  const out = [
    '| budget | breakwater row | against | peer | breakwater | ratio | needed | verdict |',
    '|---|---|---|---:|---:|---:|---:|---|',
  ];
  for (const b of budgets) {
    if (b.kind === 'na') {
      out.push(`| ${md(b.label)} | ${b.scenario} | – | – | – | – | – | **n/a**: ${md(b.reason)} |`);
      continue;
    }
    if (b.kind !== 'ratio') continue;
    const what = b.metric.startsWith('overhead') ? ' over bare' : ' per call';
    for (const c of b.checks) {
      out.push(
        `| ${md(b.label)} | ${b.scenario} / ${md(b.variant)} | ${md(c.against)} | ` +
          `${fmtValue(c.peer, b.unit)} ${b.unit}${what} | ${fmtValue(c.ours, b.unit)} ${b.unit}${what} | ` +
          `${fmtRatio(c.ratio)} | ≥ ${b.minRatio}× | **${verdict(c.pass)}** |`,
      );
    }
  }
  return out.join('\n');
}

function markdownLimits(budgets) {
  const out = ['| budget | row | measured | limit | verdict |', '|---|---|---:|---:|---|'];
  for (const b of budgets) {
    if (b.kind === 'versus') {
      for (const c of b.checks) {
        out.push(
          `| ${md(b.label)} | ${c.scenario} / ${md(c.variant)} | ` +
            `${signed(fmtValue(c.value, b.unit))} ${b.unit} over ${md(c.against ?? '–')} | ` +
            `<= +${b.limit} ${b.unit} | **${verdict(c.pass)}** |`,
        );
      }
      continue;
    }
    if (b.kind !== 'limit') continue;
    for (const c of b.checks) {
      if (c.over) {
        out.push(
          `| ${md(b.label)} | ${b.scenario} / ${md(b.variant)} | ` +
            `${signed(fmtValue(c.value, c.unit))} ${c.unit} over ${md(c.over)} | ` +
            `<= +${c.limit} ${c.unit} | **${verdict(c.pass)}** |`,
        );
        continue;
      }
      const what = c.metric.startsWith('overhead') ? ' over bare' : '';
      out.push(
        `| ${md(b.label)} | ${b.scenario} / ${md(b.variant)} | ${fmtValue(c.value, c.unit)} ${c.unit}${what} | ` +
          `<= ${c.limit} ${c.unit} | **${verdict(c.pass)}** |`,
      );
    }
  }
  return out.join('\n');
}
