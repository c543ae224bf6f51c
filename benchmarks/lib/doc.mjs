/** docs/benchmarks.md, regenerated from one run by `npm run bench:doc`. */
import { verdict } from './budgets.mjs';
import { fmtBytes, fmtNs, markdownBudgets, markdownTable } from './report.mjs';

function rowOf(report, scenario, variant) {
  return report.rows.find((r) => r.scenario === scenario && r.variant === variant);
}

const ns = (x) => `${fmtNs(x)} ns`;
const bytes = (x) => `${fmtBytes(x)} B`;
const plus = (x, f) => (x < 0 ? f(x) : `+${f(x)}`);
const allocates = (b) => (Math.round(b) === 0 ? 'allocates nothing' : `allocates ${bytes(b)}`);

/** A short reading of the numbers in plain words; a sentence is left out when its rows are. */
function reading(report) {
  const get = (s, v) => rowOf(report, s, v);
  const out = [];

  const bare = get('bare', 'await target()');
  const bareSync = get('bare', 'target() sync');
  if (bare && bareSync) {
    out.push(
      `A bare \`await target()\` of an async function costs ${ns(bare.nsPerOp)} and ${bytes(bare.bytesPerOp)} per call on this machine ` +
        '(two promises: the target’s and the await). A plain sync call is about free once the JIT inlines it ' +
        `(${ns(bareSync.nsPerOp)}). Every “over bare” figure subtracts the bare row measured in the same process.`,
    );
  }

  const closed = get('breaker-closed', 'execute, async target');
  const closedSync = get('breaker-closed', 'executeSync, sync target');
  if (closed) {
    let s =
      `A closed circuit breaker adds ${plus(closed.overheadNs, ns)} and ${plus(closed.overheadBytes, bytes)} ` +
      'to an awaited async call.';
    if (closedSync) {
      s += ` Through \`executeSync\` with a sync target the whole call takes ${ns(closedSync.nsPerOp)} and ${allocates(closedSync.bytesPerOp)}.`;
    }
    out.push(s);
  }

  const tryForced = get('breaker-open', 'tryExecute call only, forceOpen');
  const tryTrip = get('breaker-open', 'tryExecute call only, trip');
  const tryAwait = get('breaker-open', 'tryExecute, forceOpen');
  const throwing = get('breaker-open', 'execute (rejects, caught), forceOpen');
  if (tryForced && tryTrip) {
    let s =
      `Refusing a call with \`tryExecute\` on an open breaker takes ${ns(tryForced.nsPerOp)} when it was forced open ` +
      `and ${ns(tryTrip.nsPerOp)} when it was tripped, allocating ${bytes(tryForced.bytesPerOp)} and ` +
      `${bytes(tryTrip.bytesPerOp)} per call.`;
    if (tryAwait) {
      s += ` Awaited, the whole refusal takes ${ns(tryAwait.nsPerOp)} and ${bytes(tryAwait.bytesPerOp)}, the await included.`;
    }
    if (throwing) {
      s +=
        ` The throwing \`execute\` path costs ${ns(throwing.nsPerOp)} and ${bytes(throwing.bytesPerOp)}: a rejected ` +
        'promise and the `catch` are expensive in V8 whatever library makes them, which is why `tryExecute` exists.';
    }
    out.push(s);
  }

  const parts = [];
  const retry = get('retry', 'execute, maxAttempts 3');
  if (retry) {
    parts.push(
      `a retry whose first attempt succeeds adds ${plus(retry.overheadNs, ns)} and ${plus(retry.overheadBytes, bytes)}`,
    );
  }
  const coop = get('timeout', 'execute, cooperative');
  const aggr = get('timeout', 'execute, aggressive');
  if (coop && aggr) {
    parts.push(
      `a 1000 ms timeout adds ${plus(coop.overheadNs, ns)} and ${plus(coop.overheadBytes, bytes)} (cooperative) or ` +
        `${plus(aggr.overheadNs, ns)} and ${plus(aggr.overheadBytes, bytes)} (aggressive)`,
    );
  }
  const bh = get('bulkhead', 'execute, async target');
  if (bh) {
    parts.push(`a bulkhead adds ${plus(bh.overheadNs, ns)} and ${plus(bh.overheadBytes, bytes)}`);
  }
  if (parts.length > 0) {
    const text = parts.join('; ');
    out.push(`On their own, ${text}.`);
  }

  const composed = get('composed', 'execute, async target');
  const composedSync = get('composed', 'execute, sync target');
  if (composed) {
    let s =
      `All four policies in one pipeline (retry, breaker, timeout, bulkhead) add ${plus(composed.overheadNs, ns)} ` +
      `and ${plus(composed.overheadBytes, bytes)} to an async call.`;
    const rps = 10_000;
    const cpuMs = (composed.overheadNs * rps) / 1e6;
    const garbageMB = (composed.overheadBytes * rps) / 1e6;
    s +=
      ` For scale: at ${rps.toLocaleString('en-US')} calls per second that is about ${cpuMs.toFixed(1)} ms of CPU ` +
      `per second (${(cpuMs / 10).toFixed(2)} % of one core) and ${garbageMB.toFixed(1)} MB/s of extra short-lived garbage.`;
    if (composedSync) {
      s += ` With a sync target through \`execute\` they add ${plus(composedSync.overheadNs, ns)} and ${plus(composedSync.overheadBytes, bytes)} over \`await syncTarget()\`.`;
    }
    out.push(s);
  }

  const changes = report.pollution.filter((p) => p.clean !== null);
  if (changes.length > 0) {
    const list = changes
      .map(
        (p) =>
          `${p.clean.scenario} / ${p.variant} ${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(0)} %`,
      )
      .join(', ');
    out.push(
      'After the same pipeline has first run eleven different targets (a “polluted” profile), the rows change by ' +
        `${list}. Compare each change with the row’s spread in the table before reading it as more than noise.`,
    );
  }

  const judged = report.budgets.filter((b) => b.pass !== null);
  if (judged.length > 0) {
    const missed = judged.filter((b) => !b.pass).map((b) => b.label);
    const met = judged.length - missed.length;
    out.push(
      `${met} of ${judged.length} budgets ${met === 1 ? 'is' : 'are'} met` +
        (missed.length > 0 ? `; missed: ${missed.join('; ')}.` : '.'),
    );
  }
  return out.map((s) => `- ${s}`).join('\n');
}

export function renderDoc(report) {
  const m = report.machine;
  const lib = report.library;
  const pollutionLines = report.pollution
    .filter((p) => p.clean !== null)
    .map(
      (p) =>
        `| ${p.clean.scenario} / ${p.variant} | ${fmtNs(p.clean.nsPerOp)} | ${fmtNs(p.polluted.nsPerOp)} | ` +
        `${p.changePct >= 0 ? '+' : ''}${p.changePct.toFixed(1)} % | ` +
        `${fmtNs(p.clean.overheadNs)} → ${fmtNs(p.polluted.overheadNs)} | ${fmtBytes(p.clean.bytesPerOp)} → ${fmtBytes(p.polluted.bytesPerOp)} |`,
    );
  const budgetSummary = report.budgets.map((b) => `${verdict(b.pass)}: ${b.label}`).join(' · ');
  return `# Benchmarks

<!-- Generated by \`npm run bench:doc\` (benchmarks/run.mjs). Do not edit by hand: re-run it. -->

Per-call cost of breakwater's policies against a bare call, measured ${report.date.slice(0, 10)}.
Absolute nanoseconds belong to this machine; the overheads and bytes carry over better.

## Machine and versions

- Node ${m.node} (V8 ${m.v8}), ${m.os}
- CPU: ${m.cpu}, ${m.cores} cores available, ${m.memoryGiB} GiB RAM; 1-minute load average
  ${report.loadAverage.start} at the start of the run and ${report.loadAverage.end} at the end (other work on
  the machine widens the time spreads; allocation figures are not affected)
- breakwater ${lib.version}${lib.commit ? ` (commit ${lib.commit})` : ''}, built by \`npm run build\` and loaded from \`dist/\`
- mitata 1.0.34 (timing of the sync rows)

## Command

\`\`\`sh
npm run bench:doc
# = npm run build && ${report.command}
\`\`\`

\`npm run bench\` runs the same measurements and prints the table; \`npm run bench -- --json FILE\` also writes
the results as JSON, and \`--runs N\` sets the number of timing processes per scenario.

## Results

${report.settings.runs} timing process(es) and ${report.settings.allocRuns} allocation process(es) per scenario.
\`ns/op\` is the median over processes, \`spread\` the min–max of the per-process figures, \`B/op\` bytes
allocated per call; \`Δ\` is the overhead over the scenario's bare row (blank on bare rows).

${markdownTable(report.rows)}

## Budgets

${budgetSummary}

${markdownBudgets(report.budgets)}

Byte budgets are compared to the nearest byte. The tryExecute budget applies to the call itself (the refusal the
library makes); awaiting the settled promise it returns is the caller's cost, shown in the awaited rows.

${
  pollutionLines.length > 0
    ? `## Clean vs polluted profile

| row | clean ns/op | polluted ns/op | change | Δ ns over bare, clean → polluted | B/op clean → polluted |
|---|---:|---:|---:|---:|---:|
${pollutionLines.join('\n')}

`
    : ''
}## What the numbers say

${reading(report)}

## Method

- **One fresh process per scenario, mode and run**, so JIT feedback never leaks between scenarios. Rounds
  are interleaved (round 1 of every scenario, then round 2, ...) so drift of a shared machine spreads over
  all scenarios. Within a process the rows run in the order of the table, each with its own freshly
  compiled measuring loop; every row first makes one checked call (a row that does not do what its name
  says fails the run).
- **Async rows (\`time by: await loop\`)** use the peer-baseline method: sequential \`for (i < n) await op()\`
  (expected rejections inside \`try/catch\`), warm-up of about 0.7 s in growing chunks with a
  \`setImmediate\` turn between chunks, then 11 batches of about 50 ms timed with \`process.hrtime\`; the
  process reports the median batch ns/op. This is latency per call with one call in flight.
- **Sync rows (\`time by: mitata\`)** use mitata 1.0.34's \`measure()\` after the same warm-up; the process
  reports mitata's p50. mitata batches 4096 calls per sample, so a sync op the JIT can inline shows as
  well under 1 ns.
- **Allocation** (all rows) runs in separate processes started with
  \`node --expose-gc --min-semi-space-size=512 --max-semi-space-size=512\`: \`gc(); gc()\`, read
  \`v8.getHeapStatistics().used_heap_size\`, run N calls (N up to 100 000 async, 2 000 000 sync), read it
  again. A \`PerformanceObserver\` on \`'gc'\` entries checks that no collection ran inside the batch (N is
  halved and the batches redone if one did). Each process takes the median of 3 batches, after one
  unmeasured batch of the same size.
- **Overheads** are the median over processes of (row − bare row) within the same process, so load that
  slows a whole process cancels out.
- The open-breaker rows hold the breaker open with \`forceOpen()\` or trip it with \`trip()\` and a break of
  2³¹−1 ms. The polluted rows first run the pipeline through 11 different targets (async and sync,
  different return types, a bound method, a \`new Promise\` factory) 3000 rounds over.
`;
}
