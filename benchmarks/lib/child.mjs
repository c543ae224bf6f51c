/**
 * Measures every row of ONE scenario and prints one JSON line. The runner starts a fresh
 * process for each (scenario, mode, run), so JIT feedback never leaks between scenarios.
 *
 *   node benchmarks/lib/child.mjs <scenario.mjs> --mode time [--quick]
 *   node --expose-gc --min-semi-space-size=512 --max-semi-space-size=512 \
 *        benchmarks/lib/child.mjs <scenario.mjs> --mode alloc [--quick]
 *   node --expose-gc benchmarks/lib/child.mjs <memory scenario.mjs> --mode alloc [--quick]
 */
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { awaitLoopNs } from './calibrate.mjs';
import {
  allocation,
  retainedBytes,
  SETTINGS,
  timeAwaitLoop,
  timeAwaitPair,
  timeInstances,
  timeMitata,
} from './measure.mjs';

const { values, positionals } = parseArgs({
  options: {
    mode: { type: 'string', default: 'time' },
    quick: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const file = positionals[0];
if (file === undefined || (values.mode !== 'time' && values.mode !== 'alloc')) {
  console.error('usage: child.mjs <scenario.mjs> --mode time|alloc [--quick]');
  process.exit(2);
}
const id = basename(file, '.mjs');
const settings = values.quick ? SETTINGS.quick : SETTINGS.full;
const scenario = await import(pathToFileURL(file).href);

function describe(outcome) {
  return outcome.ok
    ? `value ${String(outcome.value)}`
    : `error ${outcome.error?.name}: ${outcome.error?.message}`;
}

const label = (row) => `${id} / ${row.library} / ${row.variant}`;

/** One call before measuring, so a row that does not do what it claims fails loudly. */
async function verify(row, op, dispose) {
  let outcome;
  try {
    const value = op();
    outcome = {
      ok: true,
      value: row.kind === 'sync' || row.kind === 'instances' ? value : await value,
    };
  } catch (error) {
    outcome = { ok: false, error };
  }
  const good = row.check ? await row.check(outcome) : outcome.ok;
  if (!good) throw new Error(`${label(row)}: unexpected outcome (${describe(outcome)})`);
  if (row.kind === 'instances' && outcome.ok && dispose !== undefined) dispose(outcome.value);
}

async function measureRow(row, op) {
  const opsPerCall = row.opsPerCall ?? 1;
  if (row.kind === 'instances') {
    return values.mode === 'alloc'
      ? retainedBytes(op, opsPerCall, settings, row.disposeInstance)
      : timeInstances(op, opsPerCall, settings, row.disposeInstance);
  }
  if (values.mode === 'alloc') return allocation(op, row.kind, settings, opsPerCall);
  if (row.kind === 'sync') return timeMitata(op, settings);
  return timeAwaitLoop(op, row.kind, settings, opsPerCall);
}

/** prepare() returns the op, or { op, dispose } for a row that leaves timers behind. */
async function prepareOp(row) {
  const prepared = await row.prepare();
  return typeof prepared === 'function' ? { op: prepared } : prepared;
}

/**
 * A row with `versus`, in a time run: both rows' ops made afresh and timed in alternating
 * batches (see timeAwaitPair), for the difference between them.
 */
async function measureVersus(row) {
  const other = rows.find((r) => r.library === row.library && r.variant === row.versus);
  if (other === undefined || other.kind !== row.kind || row.kind !== 'async') {
    throw new Error(`no async row "${row.versus}" to compare with`);
  }
  const a = await prepareOp(row);
  const b = await prepareOp(other);
  try {
    return await timeAwaitPair(a.op, b.op, row.kind, settings);
  } finally {
    a.dispose?.();
    b.dispose?.();
  }
}

/** Checks and measures a row (and its `versus` pair in a time run), then clears what it left. */
async function measureTimedRow(row) {
  // dispose() clears timers or intervals the row leaves behind, which must not run during
  // the rows after it.
  const { op, dispose } = await prepareOp(row);
  let result;
  try {
    await verify(row, op, row.disposeInstance);
    result = await measureRow(row, op);
  } finally {
    dispose?.();
  }
  if (row.versus === undefined || values.mode !== 'time') return result;
  return { ...result, ...(await measureVersus(row)) };
}

/** A 'memory' row measures itself: `measure()` returns its figures (see measure.mjs). */
async function measureMemoryRow(row) {
  if (values.mode !== 'alloc') throw new Error('memory rows are measured in allocation runs');
  const figures = await row.measure();
  if (row.check && !row.check(figures)) {
    throw new Error(`unexpected figures (${JSON.stringify(figures)})`);
  }
  return { method: 'memory', ...figures };
}

const rows = scenario.rows({ quick: values.quick });
const out = { scenario: id, title: scenario.title, mode: values.mode, rows: [] };
// A timing process times the calibration loop before and after its rows: the runner measures
// it again if its core was slowed meanwhile (see run.mjs).
const calibrate = values.mode === 'time' && !values.quick;
const calibrationStart = calibrate ? await awaitLoopNs() : null;
const identity = (row) => ({
  library: row.library,
  variant: row.variant,
  kind: row.kind,
  baseline: row.baseline ?? null,
  versus: row.versus ?? null,
  cleanOf: row.cleanOf ?? null,
  opsPerCall: row.opsPerCall ?? 1,
});
for (const row of rows) {
  try {
    const figures =
      row.kind === 'memory' ? await measureMemoryRow(row) : await measureTimedRow(row);
    out.rows.push({ ...identity(row), ...figures, ...row.extra?.() });
  } catch (error) {
    throw new Error(`${label(row)}: ${error.message}`, { cause: error });
  }
}
if (calibrate) out.calibration = { start: calibrationStart, end: await awaitLoopNs() };
console.log(JSON.stringify(out));
// Policy timers must not keep the process alive after measuring.
process.exit(0);
