/**
 * Measures every row of ONE scenario and prints one JSON line. The runner starts a fresh
 * process for each (scenario, mode, run), so JIT feedback never leaks between scenarios.
 *
 *   node benchmarks/lib/child.mjs <scenario.mjs> --mode time [--quick]
 *   node --expose-gc --min-semi-space-size=512 --max-semi-space-size=512 \
 *        benchmarks/lib/child.mjs <scenario.mjs> --mode alloc [--quick]
 */
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { allocation, SETTINGS, timeAwaitLoop, timeMitata } from './measure.mjs';

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

/** One call before measuring, so a row that does not do what it claims fails loudly. */
async function verify(row, op) {
  let outcome;
  try {
    const value = op();
    outcome = { ok: true, value: row.kind === 'sync' ? value : await value };
  } catch (error) {
    outcome = { ok: false, error };
  }
  const good = row.check ? await row.check(outcome) : outcome.ok;
  if (!good) throw new Error(`${id} / ${row.variant}: unexpected outcome (${describe(outcome)})`);
}

const rows = scenario.rows({ quick: values.quick });
const out = { scenario: id, title: scenario.title, mode: values.mode, rows: [] };
for (const row of rows) {
  const op = await row.prepare();
  await verify(row, op);
  let result;
  if (values.mode === 'alloc') result = await allocation(op, row.kind, settings);
  else if (row.kind === 'sync') result = await timeMitata(op, settings);
  else result = await timeAwaitLoop(op, row.kind, settings);
  out.rows.push({
    library: row.library,
    variant: row.variant,
    kind: row.kind,
    baseline: row.baseline ?? null,
    cleanOf: row.cleanOf ?? null,
    ...result,
  });
}
console.log(JSON.stringify(out));
// Policy timers must not keep the process alive after measuring.
process.exit(0);
