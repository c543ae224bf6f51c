/**
 * What the doc says of what a run measured and under which conditions: the library and the
 * versions installed, the configuration of every row, the machine's load, where the measuring
 * processes ran, and the processes run again.
 */
import { md } from './report.mjs';

/**
 * The placeholders of benchmarks/page.md that say what the run measured and under which
 * conditions (see lib/doc.mjs), by name.
 */
export function conditions(report) {
  const m = report.machine;
  return {
    date: report.date.slice(0, 10),
    node: m.node,
    v8: m.v8,
    os: m.os,
    cpu: m.cpu,
    cores: m.cores,
    memoryGiB: m.memoryGiB,
    loadStart: report.loadAverage.start,
    loadEnd: report.loadAverage.end,
    busy: busyClause(report),
    pinning: pinningLine(m.pinning),
    slowed: slowedLine(report.slowed),
    library: libraryLine(report.library),
    versions: versionsTable(report),
    command: report.command,
    decorators: decoratorsClause(report),
    configs: configsTable(report),
    runs: report.settings.runs,
    allocRuns: report.settings.allocRuns,
    retried: retriedParagraph(report.retried),
  };
}

/** The doc's line naming the library measured: its version and the commit it was built from. */
export function libraryLine(lib) {
  return `breakwater ${lib.version} (commit ${lib.commit}), built by \`npm run build\` and loaded from \`dist/\``;
}

/** Each dependency of benchmarks/package.json: the version installed and the one pinned. */
function versionsTable(report) {
  const pkg = report.dependencies ?? {};
  const lines = ['| package | installed | package.json |', '|---|---|---|'];
  for (const [name, v] of Object.entries(report.versions)) {
    lines.push(`| ${name} | ${v ?? 'missing'} | \`${pkg[name] ?? ''}\` |`);
  }
  return lines.join('\n');
}

/** Every configuration used, with the source of the factory that built it. */
function configsTable(report) {
  const lines = ['| library | used for | configuration (source of the factory that built it) |'];
  lines.push('|---|---|---|');
  for (const c of report.configs) {
    lines.push(`| ${c.library} | ${c.use} | \`${md(c.source)}\` |`);
  }
  return lines.join('\n');
}

/** How the decorators are configured, or that the measured build has none. */
function decoratorsClause(report) {
  return report.configs.some((c) => c.use === 'composed, decorators')
    ? ', and so do its decorators, stacked on an async method that returns 1 like the target of the other rows'
    : '; the measured build has no decorators, so they have no row';
}

/** A warning when the load neared the cores available (load average at the start or the end). */
function busyClause(report) {
  const { cores } = report.machine;
  if (Math.max(report.loadAverage.start, report.loadAverage.end) <= cores * 0.75) return '';
  return `. **The machine was busy during this run** (load near or above its ${cores} cores): time figures are
  inflated and noisier than on an idle machine; overheads are taken within each process, which cancels part of it`;
}

/** How the measuring processes were placed on the cores, per round (see lib/cpu.mjs). */
function pinningLine(rounds) {
  if (rounds === undefined || rounds.length === 0)
    return 'Measuring processes not pinned to a core';
  if (rounds[0].cpu === null)
    return `Measuring processes not pinned to a core (${rounds[0].reason})`;
  if (rounds[0].calibration.length === 0) {
    return `Every measuring process ran pinned to core ${rounds[0].cpu} with \`taskset\` (${rounds[0].reason})`;
  }
  const each = rounds
    .map((p, i) => {
      const cal = p.calibration.map((c) => `${c.nsPerAwait} ns on core ${c.cpu}`).join(', ');
      return `round ${i + 1} on core ${p.cpu} (${cal})`;
    })
    .join('; ');
  return `Every measuring process ran pinned to one core with \`taskset\`, ${rounds[0].reason}, chosen again
  before each round (an await loop, per call: ${each}). The cores of a virtual machine can differ by half on
  promise-heavy code, and a process left to the scheduler landed on either. The Redis scenario is not pinned:
  its server would share the core`;
}

/** Timing processes measured again because their core was slowed (see run.mjs, runTimed). */
function slowedLine(slowed) {
  const text =
    'Each timing process times the same await loop before and after its rows; one whose loop ran more than ' +
    '1.25× slower than the fastest seen in the run was on a slowed core (the host of a virtual machine can slow ' +
    'both cores for minutes) and is run again, twice at most, keeping the run with the fastest loop';
  if (slowed === undefined || slowed.length === 0)
    return `${text}: no process needed it in this run`;
  const per = new Map();
  for (const s of slowed) per.set(s.scenario, (per.get(s.scenario) ?? 0) + 1);
  return `${text}: ${slowed.length} process(es) were run again (${[...per].map(([id, n]) => `${id} ${n}`).join(', ')})`;
}

/** Measuring processes that failed once and were run again, as a paragraph after a blank line. */
function retriedParagraph(retried) {
  if ((retried ?? []).length === 0) return '';
  return `\n\n${retried.length} measuring process(es) failed once and were run again, as the runner does on a busy
machine: ${retried.map((r) => `${r.scenario} (${r.mode}): ${md(r.error)}`).join('; ')}.`;
}
