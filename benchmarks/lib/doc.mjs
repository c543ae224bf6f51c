/**
 * docs/benchmarks.md, regenerated from one run by `npm run bench:doc`: the page template. Each
 * scenario file adds its own paragraph to the reading (`reading`) and its notes on missed
 * budgets (`missNote` against the peers, `ownMissNote` for breakwater's own limits).
 */
import { verdict } from './budgets.mjs';
import { finder } from './prose.mjs';
import {
  fmtBytes,
  fmtNs,
  fmtRatio,
  markdownBudgets,
  markdownLimits,
  markdownTable,
  md,
} from './report.mjs';

/** What each scenario says of its rows, in scenario order, then the polluted profiles. */
function reading(report, scenarios) {
  const get = finder(report);
  const out = scenarios
    .map((s) => s.module.reading?.({ report, get }))
    .filter((s) => s !== undefined);

  const changes = report.pollution.filter((p) => p.clean !== null);
  if (changes.length > 0) {
    const big = changes.filter((p) => Math.abs(p.changePct) >= 10);
    out.push(
      'After the same policy has first run eleven different targets (a “polluted” profile), ' +
        (big.length === 0
          ? 'no row changes by 10 % or more.'
          : `these rows change by 10 % or more: ${big
              .map(
                (p) =>
                  `${p.clean.scenario}: ${p.library} ${p.variant} ${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(0)} %`,
              )
              .join(', ')}.`) +
        ' Compare each change with the rows’ spreads before reading it as more than noise.',
    );
  }
  return out.map((s) => `- ${s}`).join('\n');
}

/** The notes of the scenarios' `missNote` or `ownMissNote` on the budgets this run missed. */
function missNotes(report, scenarios, name) {
  const get = finder(report);
  const missed = new Set(report.budgets.filter((b) => b.pass === false).map((b) => b.id));
  return scenarios
    .map((s) => s.module[name]?.({ report, get, missed }))
    .filter((n) => n !== undefined);
}

/** Failed ratio checks that came within 10 % of the ratio needed. */
function nearMisses(report) {
  const out = [];
  for (const b of report.budgets) {
    if (b.kind !== 'ratio') continue;
    for (const c of b.checks) {
      if (c.pass === false && c.ratio >= b.minRatio * 0.9) {
        out.push(`${b.label}, vs ${c.against} (${fmtRatio(c.ratio)} of ${b.minRatio}×)`);
      }
    }
  }
  return out;
}

function versionsTable(report) {
  const pkg = report.dependencies ?? {};
  const lines = ['| package | installed | package.json |', '|---|---|---|'];
  for (const [name, v] of Object.entries(report.versions)) {
    lines.push(`| ${name} | ${v ?? 'missing'} | \`${pkg[name] ?? ''}\` |`);
  }
  return lines.join('\n');
}

function configsTable(report) {
  const lines = ['| library | used for | configuration (source of the factory that built it) |'];
  lines.push('|---|---|---|');
  for (const c of report.configs) {
    lines.push(`| ${c.library} | ${c.use} | \`${md(c.source)}\` |`);
  }
  return lines.join('\n');
}

function resultSections(report) {
  const out = [];
  for (const s of report.scenarios) {
    const rows = report.rows.filter((r) => r.scenario === s.id);
    const absent = report.absent.filter((a) => a.scenario === s.id);
    if (rows.length === 0) continue;
    out.push(`### ${s.title} (\`${s.id}\`)\n\n${markdownTable(rows, absent)}`);
  }
  return out.join('\n\n');
}

function pollutionTable(report) {
  const lines = report.pollution
    .filter((p) => p.clean !== null)
    .map(
      (p) =>
        `| ${p.library} | ${md(p.variant)} | ${fmtNs(p.clean.nsPerOp)} | ${fmtNs(p.polluted.nsPerOp)} | ` +
        `${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(1)} % | ` +
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

/** The doc's line naming the library measured: its version and the commit it was built from. */
export function libraryLine(lib) {
  return `breakwater ${lib.version} (commit ${lib.commit}), built by \`npm run build\` and loaded from \`dist/\``;
}

/** The page for a report, with the scenarios (as loadScenarios returns them) that read it. */
export function renderDoc(report, scenarios) {
  const m = report.machine;
  const lib = report.library;
  const peerBudgets = report.budgets.filter((b) => b.kind === 'ratio' || b.kind === 'na');
  const limitBudgets = report.budgets.filter((b) => b.kind === 'limit' || b.kind === 'versus');
  const summary = (list) => list.map((b) => `${verdict(b.pass)}: ${b.label}`).join(' · ');
  const notes = missNotes(report, scenarios, 'missNote');
  const ownNotes = missNotes(report, scenarios, 'ownMissNote');
  const near = nearMisses(report);
  const busy = Math.max(report.loadAverage.start, report.loadAverage.end) > m.cores * 0.75;
  return `# Benchmarks

<!-- Generated by \`npm run bench:doc\` (benchmarks/run.mjs). Do not edit by hand: re-run it. -->

Per-call cost of breakwater's policies and of the libraries people use for the same job (cockatiel 4 and 3,
opossum, p-retry, rate-limiter-flexible, bottleneck), measured side by side in one run on ${report.date.slice(0, 10)}.
Absolute nanoseconds belong to this machine; the overheads, ratios and bytes carry over better.

## Machine and versions

- Node ${m.node} (V8 ${m.v8}), ${m.os}
- CPU: ${m.cpu}, ${m.cores} cores available, ${m.memoryGiB} GiB RAM; 1-minute load average
  ${report.loadAverage.start} at the start of the run and ${report.loadAverage.end} at the end (other work on
  the machine widens the time spreads; allocation figures are not affected)${
    busy
      ? `. **The machine was busy during this run** (load near or above its ${m.cores} cores): time figures are
  inflated and noisier than on an idle machine; overheads are taken within each process, which cancels part of it`
      : ''
  }
- ${pinningLine(m.pinning)}
- ${slowedLine(report.slowed)}
- ${libraryLine(lib)}
- Peers and tools, as installed in \`benchmarks/node_modules\` (\`benchmarks/package.json\` and its lock file pin them;
  cockatiel 3 is installed under the alias \`cockatiel3\`):

${versionsTable(report)}

cockatiel 4.0.0 and p-retry 9.0.0 declare \`engines: node >=22\` and opossum 10.0.0 \`^22 || ^24 || ^26\`; on
Node 20 npm only warns, and every row checks its first call's outcome before it is measured.

## Command

\`\`\`sh
npm run bench:doc
# = npm run build && ${report.command}
\`\`\`

\`npm run bench\` runs the same measurements and prints the table; \`npm run bench -- --json FILE\` also writes
the results as JSON (\`{ machine, versions, configs, rows: [{ scenario, library, variant, nsPerOp, nsSpread,
bytesPerOp, overheadNs, ... }], budgets }\`), \`--runs N\` sets the number of timing processes per scenario and
\`--filter REGEX\` picks scenarios. The runner installs \`benchmarks/\` dependencies (\`npm ci --prefix benchmarks\`)
when they are missing. The results this page was made from are kept beside it in \`docs/benchmarks.json\`;
\`node benchmarks/run.mjs --from docs/benchmarks.json --doc docs/benchmarks.md\` makes the page again from them
without measuring (the budgets are judged again).

## Configurations

Each library is configured like the others: breakers open after 5 consecutive failures and stay open 10 s,
retries make 3 retries with exponential backoff from about 100 ms, timeouts are 1000 ms, bulkheads admit 100
calls with no queue, and no event listener is attached. What cannot be matched: opossum has no
consecutive-failure window (its breaker uses a rolling 10 s window opening at 50 % errors), no standalone timeout
or bulkhead (its timeout and bulkhead rows include its breaker), and its internal statistics listeners are always
on; its two 1 s background intervals per breaker run between measured batches, not inside them, and are
cleared after each row. cockatiel's composition is \`wrap(retry, breaker, bulkhead, timeout)\`; breakwater's pipeline
runs retry, breaker, timeout, bulkhead (outer to inner)${
    report.configs.some((c) => c.use === 'composed, decorators')
      ? ', and so do its decorators, stacked on an async method that returns 1 like the target of the other rows'
      : '; the measured build has no decorators, so they have no row'
  }. The configuration of every row, printed from the code
that built it:

${configsTable(report)}

## Budgets against the peers

Judged on figures from this run: each compares overheads over the bare call measured in the same process (for
the open breaker, breakwater's awaited \`tryExecute\` on a tripped breaker against the peers' caught rejection on
theirs). A ratio is the peer's figure divided by breakwater's; it must reach the number in “needed”.

${summary(peerBudgets)}

${markdownBudgets(peerBudgets)}
${near.length > 0 ? `\nNear misses, within 10 % of the ratio needed: ${near.join('; ')}. The spreads of the rows involved are wider than\nthat gap, so another run may judge these either way.\n` : ''}${notes.length > 0 ? `\nWhere a budget is missed, what costs the difference (figures from this run):\n\n${notes.map((n) => `- ${n}`).join('\n')}\n` : ''}
## Results

${report.settings.runs} timing process(es) and ${report.settings.allocRuns} allocation process(es) per scenario.
\`ns/op\` is the median over processes, \`spread\` the min–max of the per-process figures, \`B/op\` bytes
allocated per call; \`Δ\` is the overhead over the bare row of the same scenario that makes the same kind of
call (awaited, sync, caught, or the same batch), measured in the same process (blank on bare rows). In the
in-flight rows an op is a batch of concurrent calls and every figure is per call. In the breaker
instance rows figures are per instance and \`B/op\` is what each instance keeps alive after a full GC
(“kept”). The keyed-registry rows (\`time by: heap after GC\`) give ns per key pushed and the heap each key
keeps after full collections (per key held, for the capped registry). Rows of library \`reference\` price a
platform operation for comparison.${
    (report.retried ?? []).length > 0
      ? `\n\n${report.retried.length} measuring process(es) failed once and were run again, as the runner does on a busy
machine: ${report.retried.map((r) => `${r.scenario} (${r.mode}): ${md(r.error)}`).join('; ')}.`
      : ''
  }

${resultSections(report)}

${pollutionTable(report)}## What the numbers say

${reading(report, scenarios)}

## breakwater's own budgets

${summary(limitBudgets)}

${markdownLimits(limitBudgets)}
${ownNotes.length > 0 ? `\nWhere a budget is missed (figures from this run):\n\n${ownNotes.map((n) => `- ${n}`).join('\n')}\n` : ''}
Byte budgets are compared to the nearest byte. The tryExecute budget applies to the call itself (the refusal the
library makes); awaiting the settled promise it returns is the caller's cost, shown in the awaited rows. The
decorator budget compares a decorated method with the same pipeline called directly with a closure per call
(\`p.execute(() => service.call())\` on the same method, undecorated). Each service class is defined once per
process, as a program defines it, and every row makes an instance: a class defined again for each row would
show the scenario's \`service.call()\` call site one class more per row, something no call site of a program
sees (it made the decorated breaker call read about 7 ns dearer against the direct one). In each timing process, after the
rows themselves, the two are timed again in alternating batches of about 50 ms (order swapped every pair),
and the process reports the median of the batch-to-batch differences; the budget takes the median over
processes. Sequential rows each get their own share of a busy machine's drift; alternating batches share it.
The keyed-registry budgets read the heap after full collections: bytes per idle key, and the heap after every
key was pushed through the capped registry against the heap once the cap was first reached.

## Method

- **One fresh process per scenario, mode and run**, so JIT feedback never leaks between scenarios. Rounds
  are interleaved (round 1 of every scenario, then round 2, ...) so drift of a shared machine spreads over
  all scenarios. Within a process the rows run in the order of the table, each with its own freshly
  compiled measuring loop. Each loop's source differs by a numbered comment (mitata's, by its
  \`max_samples\`): V8 gives functions compiled from the same text one feedback vector, and the loop of a
  row would otherwise carry the ops of every row before it, a call site no longer inlined that made later
  rows (every library row) slower by a few ns. Every row first makes one checked call (a row that does not
  do what its name says fails the run), and timers a row leaves (opossum's intervals, timeout timers) are
  cleared before the next row.
- **Async rows (\`time by: await loop\`)** use the peer-baseline method: sequential \`for (i < n) await op()\`
  (expected rejections inside \`try/catch\`), warm-up of about 0.7 s in growing chunks with a
  \`setImmediate\` turn between chunks, then 11 batches of about 50 ms timed with \`process.hrtime\`; the
  process reports the median batch ns/op. This is latency per call with one call in flight, except in the
  in-flight rows, whose op starts 100 or 10,000 calls together and awaits them all.
- **Sync rows (\`time by: mitata\`)** use mitata's \`measure()\` after the same warm-up; the process
  reports mitata's p50. mitata batches 4096 calls per sample, so a sync op the JIT can inline shows as
  well under 1 ns.
- **Allocation** (all rows but the instance and keyed-registry rows) runs in separate processes started with
  \`node --expose-gc --min-semi-space-size=512 --max-semi-space-size=512\`: \`gc(); gc()\`, read
  \`v8.getHeapStatistics().used_heap_size\`, run N calls (N up to 100 000 async, 2 000 000 sync), read it
  again. A \`PerformanceObserver\` on \`'gc'\` entries checks that no collection ran inside the batch (N is
  halved and the batches redone if one did). Each process takes the median of 3 batches, after one
  unmeasured batch of the same size.
- **Instance rows** (\`time by: instances\`) make 100,000 instances into a preallocated array, all kept alive:
  one unmeasured round, then 5 timed rounds (median; collections the instances cause are part of the time).
  Their bytes are **retained**: \`gc(); gc()\`, heap size, make the instances, \`gc(); gc()\`, heap size again.
- **Keyed-registry rows** (\`time by: heap after GC\`) run once per allocation run, in a process started with
  \`node --expose-gc\` and default heap sizes. Each key makes one call through its own breaker
  (\`pipeline(registry.keyedCircuitBreaker('api', key)).executeSync(() => 1)\`); the heap is
  \`heapUsed + arrayBuffers\` after three full collections, read before the keys and after them (idle), or at
  the cap, after the second round of keys and at the end (churn). The time is the wall time of the key loops
  divided by the keys, collections included. The bare rows hold the same keys in a Map of empty objects.
- **Overheads** are the median over processes of (row − bare row) within the same process, so load that
  slows a whole process cancels out.
- The breakwater open-breaker rows hold the breaker open with \`forceOpen()\` or trip it with \`trip()\` and a
  break of 2³¹−1 ms; the peers' breakers are tripped by failing calls, with the same break. The polluted rows
  first run the policy through 11 different targets 3000 rounds over.
`;
}
