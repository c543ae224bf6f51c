/**
 * Runs every scenario in benchmarks/scenarios/ (one fresh process per scenario, mode and run)
 * and prints a table of ns/op and bytes/op with the overhead over a bare call and the budgets.
 *
 *   node benchmarks/run.mjs [--quick] [--runs N] [--alloc-runs N] [--filter REGEX]
 *                           [--cpu N|auto|none] [--json FILE] [--doc FILE]
 *   node benchmarks/run.mjs --from FILE [--doc FILE]
 *
 * `npm run bench` builds the library first; this script builds it only when dist/ is missing,
 * and installs benchmarks/ dependencies (npm ci) when they are missing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkBudgets, scenarioBudgets } from './lib/budgets.mjs';
import { chooseCpu, pinned } from './lib/cpu.mjs';
import { renderDoc } from './lib/doc.mjs';
import {
  benchDir,
  docRefusal,
  ensureBuilt,
  ensureDependencies,
  installedVersions,
  library,
  machine,
  snapshotDist,
} from './lib/env.mjs';
import { pollution } from './lib/pollution.mjs';
import { aggregate, consoleReport } from './lib/report.mjs';
import { loadScenarios } from './lib/scenarios.mjs';
import { round } from './lib/stats.mjs';

const USAGE = `usage: node benchmarks/run.mjs [options]
  --quick           each scenario once, a few iterations, 16 MB new space for allocation runs
                    (checks the harness quickly; the figures mean nothing)
  --runs N          timing processes per scenario (default 3)
  --alloc-runs N    allocation processes per scenario (default 1; allocation is deterministic)
  --filter REGEX    only scenarios whose id (file name) matches
  --cpu N|auto|none pin the measuring processes to core N with taskset (Linux); auto (the
                    default, but none with --quick) picks the core where an await loop runs
                    fastest; none leaves them to the scheduler
  --json FILE       also write the results as JSON
  --doc FILE        also write the markdown report (docs/benchmarks.md); refused before anything
                    is measured when src/, benchmarks/, package.json or tsdown.config.ts differ
                    from the commit checked out, since the doc names the commit it measured
  --from FILE       measure nothing: report the results a run wrote with --json (the budgets
                    are judged again), e.g. --from docs/benchmarks.json --doc docs/benchmarks.md`;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    'alloc-runs': { type: 'string' },
    filter: { type: 'string' },
    cpu: { type: 'string' },
    json: { type: 'string' },
    doc: { type: 'string' },
    from: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

if (values.doc !== undefined && values.from === undefined) refuseDoc(library());
/** Every scenario file, loaded once the library to measure is in place; they hold the budgets. */
let scenarioFiles;
const report = values.from === undefined ? await measure() : await readReport(values.from);
if (values.doc !== undefined) refuseDoc(report.library);

/** Exits before measuring anything when the doc could not name the commit it measured. */
function refuseDoc(lib) {
  const reason = docRefusal(lib);
  if (reason === undefined) return;
  console.error(`--doc: not written: ${reason}`);
  process.exit(2);
}

/** An earlier run's JSON report, its budgets and pollution figures judged by today's rules. */
async function readReport(file) {
  let report;
  try {
    report = JSON.parse(readFileSync(resolve(file), 'utf8'));
  } catch (error) {
    console.error(`--from ${file}: ${error.message}`);
    process.exit(2);
  }
  if (!Array.isArray(report.rows) || report.machine === undefined) {
    console.error(`--from ${file}: not a report written by --json (no rows or machine)`);
    process.exit(2);
  }
  if (values.doc !== undefined) refuseDoc(report.library);
  // The budgets and the doc's reading live in the scenario files, which load the library and
  // the peers.
  ensureDependencies();
  ensureBuilt();
  scenarioFiles = await loadScenarios();
  return {
    ...report,
    budgets: checkBudgets(report.rows, scenarioBudgets(scenarioFiles)),
    pollution: pollution(report.rows),
  };
}

/** Runs the scenarios and returns the report. */
async function measure() {
  function count(name, fallback) {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) {
      console.error(`--${name} must be a whole number >= 1, got ${raw}\n${USAGE}`);
      process.exit(2);
    }
    return n;
  }

  const quick = values.quick;
  const runs = quick ? 1 : count('runs', 3);
  const allocRuns = quick ? 1 : count('alloc-runs', 1);
  const filter = values.filter === undefined ? undefined : new RegExp(values.filter);

  ensureDependencies();
  ensureBuilt();
  // Every process of the run, this one included, loads the library from one copy of dist/.
  process.env.BREAKWATER_DIST = snapshotDist();

  const cpuChoice = values.cpu ?? (quick ? 'none' : 'auto');
  if (!/^(auto|none|\d+)$/.test(cpuChoice)) {
    console.error(`--cpu must be a core number, auto or none, got ${cpuChoice}\n${USAGE}`);
    process.exit(2);
  }
  /**
   * Chooses the core for the next round: the fastest core can change during a long run on a
   * virtual machine, so it is chosen again before each round.
   */
  function pinRound() {
    const p = chooseCpu(cpuChoice);
    process.stderr.write(
      p.cpu === null
        ? `measuring processes not pinned: ${p.reason}\n`
        : `measuring processes pinned to core ${p.cpu} (${p.reason}${
            p.calibration.length > 0
              ? `: ${p.calibration.map((c) => `core ${c.cpu} ${c.nsPerAwait} ns`).join(', ')}`
              : ''
          })\n`,
    );
    pinnings.push(p);
    return p;
  }
  const pinnings = [];
  let pinning;

  // Every scenario is loaded (the budgets of those --filter leaves out are reported n/a).
  scenarioFiles = await loadScenarios();
  const scenarios = scenarioFiles
    .filter(({ id }) => filter === undefined || filter.test(id))
    .map(({ id, file, module: mod }) => ({
      id,
      file,
      title: mod.title,
      notImplemented: mod.notImplemented ?? [],
      memory: mod.memory === true,
      pinned: mod.pinned !== false,
      time: [],
      alloc: [],
    }));
  if (scenarios.length === 0) {
    console.error(`no scenario matches ${values.filter}`);
    process.exit(2);
  }

  const childScript = join(benchDir, 'lib', 'child.mjs');
  // A new space big enough that no scavenge lands inside a measured batch. It makes a process
  // start about a second slower, so --quick (small batches, figures meaningless) uses 16 MB.
  const semiSpaceMB = quick ? 16 : 512;
  const ALLOC_FLAGS = [
    '--expose-gc',
    `--min-semi-space-size=${semiSpaceMB}`,
    `--max-semi-space-size=${semiSpaceMB}`,
  ];
  // Scenarios that measure what the heap keeps (`memory`) run with the default heap sizes.
  const MEMORY_FLAGS = ['--expose-gc'];

  /**
   * Runs one measuring process; a process that fails is run once more (a busy machine can make
   * a row fail once, e.g. a collection in every allocation batch), and a second failure ends the
   * run.
   */
  function runChild(scenario, mode) {
    try {
      return runChildOnce(scenario, mode);
    } catch (error) {
      process.stderr.write(`  ${error.message}; running it once more\n`);
      retried.push({ scenario: scenario.id, mode, error: error.message });
      return runChildOnce(scenario, mode);
    }
  }

  const retried = [];

  /**
   * A timing process whose calibration loop (timed before and after its rows) ran this much
   * slower than the fastest calibration seen in the run was on a slowed core: a virtual
   * machine's host can slow both cores for minutes. Such a process is run again, twice at most,
   * and the run with the fastest calibration is kept.
   */
  const SLOWED = 1.25;
  let fastestCalibration = Number.POSITIVE_INFINITY;
  const slowed = [];

  function runTimed(scenario) {
    let best;
    for (let attempt = 1; ; attempt++) {
      const r = runChild(scenario, 'time');
      if (r.calibration === undefined) return r;
      const { start, end } = r.calibration;
      fastestCalibration = Math.min(fastestCalibration, start, end);
      const worst = Math.max(start, end);
      if (best === undefined || worst < best.worst) best = { r, worst };
      if (worst <= fastestCalibration * SLOWED || attempt === 3) return best.r;
      slowed.push({ scenario: scenario.id, attempt, calibration: r.calibration });
      process.stderr.write(
        `  ${scenario.id}: core slowed (await loop ${round(start, 1)} -> ${round(end, 1)} ns, fastest ${round(fastestCalibration, 1)} ns); measuring it again\n`,
      );
    }
  }

  function runChildOnce(scenario, mode) {
    const args = [
      ...(mode === 'alloc' ? (scenario.memory ? MEMORY_FLAGS : ALLOC_FLAGS) : []),
      childScript,
      scenario.file,
      '--mode',
      mode,
      ...(quick ? ['--quick'] : []),
    ];
    const started = Date.now();
    const [command, commandArgs] = pinned(scenario.pinned ? pinning.cpu : null, args);
    const r = spawnSync(command, commandArgs, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: quick ? 60_000 : 900_000,
      maxBuffer: 16 * 2 ** 20,
    });
    if (r.status !== 0) {
      throw new Error(
        `${scenario.id} (${mode}) failed: ${r.error?.message ?? `exit ${r.status ?? r.signal}`}`,
      );
    }
    const last = r.stdout.trim().split('\n').pop();
    process.stderr.write(`  ${mode.padEnd(5)} ${scenario.id} (${Date.now() - started} ms)\n`);
    return JSON.parse(last);
  }

  // Rounds are interleaved (round 1 of every scenario, then round 2, ...), so slow drift of a
  // shared machine spreads over all scenarios instead of landing on one.
  const loadAtStart = loadavg()[0];
  const rounds = Math.max(runs, allocRuns);
  try {
    for (let round = 1; round <= rounds; round++) {
      process.stderr.write(`round ${round}/${rounds}\n`);
      pinning = pinRound();
      for (const c of pinning.calibration) {
        fastestCalibration = Math.min(fastestCalibration, c.nsPerAwait);
      }
      for (const s of scenarios) {
        // A memory scenario times its own rows in its allocation runs.
        if (round <= runs && !s.memory) s.time.push(runTimed(s));
        if (round <= allocRuns) s.alloc.push(runChild(s, 'alloc'));
      }
    }
  } catch (error) {
    console.error(`benchmark run failed: ${error.message}`);
    process.exit(1);
  }

  // Imported once dist/ is built and snapshotted: pipelines.mjs loads the library.
  const { peerConfigs } = await import('./lib/peers.mjs');
  const { breakwaterConfigs } = await import('./lib/pipelines.mjs');

  const rows = aggregate(scenarios);
  const report = {
    machine: { ...machine(), pinning: pinnings },
    library: library(),
    versions: installedVersions(),
    dependencies: JSON.parse(readFileSync(join(benchDir, 'package.json'), 'utf8')).dependencies,
    configs: [...breakwaterConfigs(), ...peerConfigs()],
    command: `node benchmarks/run.mjs ${process.argv.slice(2).join(' ')}`.trim(),
    settings: { quick, runs, allocRuns, filter: values.filter ?? null },
    // 1-minute load average when the run started and ended: other work on the machine widens
    // the time spreads (allocation is not affected).
    loadAverage: { start: round(loadAtStart, 2), end: round(loadavg()[0], 2) },
    date: new Date().toISOString(),
    scenarios: scenarios.map((s) => ({ id: s.id, title: s.title })),
    rows,
    // Libraries a scenario has no row for, and why (e.g. a breakwater feature not built yet).
    absent: scenarios.flatMap((s) => s.notImplemented.map((a) => ({ scenario: s.id, ...a }))),
    budgets: checkBudgets(rows, scenarioBudgets(scenarioFiles)),
    pollution: pollution(rows),
    // Processes that failed once and were run again.
    retried,
    // Timing processes run again because their core was slowed (see runTimed).
    slowed,
  };
  return report;
}

console.log(
  consoleReport({
    rows: report.rows,
    absent: report.absent,
    budgets: report.budgets,
    pollution: report.pollution,
    meta: report,
  }),
);

function write(file, text) {
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  process.stderr.write(`wrote ${path}\n`);
}
if (values.json !== undefined) write(values.json, `${JSON.stringify(report, null, 2)}\n`);
if (values.doc !== undefined) write(values.doc, renderDoc(report, scenarioFiles));
