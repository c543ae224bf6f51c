/** docs/benchmarks.md, regenerated from one run by `npm run bench:doc`. */
import { verdict } from './budgets.mjs';
import {
  fmtBytes,
  fmtNs,
  fmtRatio,
  markdownBudgets,
  markdownLimits,
  markdownTable,
  md,
} from './report.mjs';

const ns = (x) => `${fmtNs(x)} ns`;
const bytes = (x) => `${fmtBytes(x)} B`;
const plus = (x, f) => (x < 0 ? f(x) : `+${f(x)}`);
const over = (r) => `${plus(r.overheadNs, ns)} and ${plus(r.overheadBytes, bytes)}`;
const ms = (x) => `${(x / 1e6).toFixed(1)} ms`;

/** Row lookup for the reading: `get(scenario, library, variant)`. */
function finder(report) {
  return (scenario, library, variant) =>
    report.rows.find(
      (r) => r.scenario === scenario && r.library === library && r.variant === variant,
    );
}

/** "cockatiel 4 +123 ns, cockatiel 3 +130 ns" for the rows that exist. */
function list(items, f) {
  return items
    .filter(([, r]) => r !== undefined)
    .map(([name, r]) => `${name} ${f(r)}`)
    .join(', ');
}

/**
 * "+X ns and +Y B; the same pipeline called directly with a closure per call ..." for a
 * decorated row and its `versus` row.
 */
function decoratedText(decorated, direct) {
  let s = over(decorated);
  if (direct) {
    s +=
      `; the same pipeline called directly with a closure per call (\`p.execute(() => service.call())\` on the ` +
      `undecorated method, what code without decorators writes) adds ${over(direct)}, so the decorator costs ` +
      `${plus(decorated.versusNs, ns)} and ${plus(decorated.versusBytes, bytes)} over it`;
  }
  return s;
}

const ratio = (a, b) => (a && b && b.overheadNs > 0 ? fmtRatio(a.overheadNs / b.overheadNs) : '–');

/** A short reading of the numbers in plain words; a sentence is left out when its rows are. */
function reading(report) {
  const get = finder(report);
  const out = [];

  const bare = get('bare', 'bare', 'await target()');
  const bareSync = get('bare', 'bare', 'target() sync');
  if (bare && bareSync) {
    out.push(
      `A bare \`await target()\` of an async function costs ${ns(bare.nsPerOp)} and ${bytes(bare.bytesPerOp)} per call ` +
        'on this machine (two promises: the target’s and the await). A plain sync call is about free once the JIT ' +
        `inlines it (${ns(bareSync.nsPerOp)}). Every “Δ” figure subtracts the bare row measured in the same process.`,
    );
  }

  const S = 'breaker-closed';
  const closed = get(S, 'breakwater', 'execute, async target');
  if (closed) {
    const then = get(S, 'reference', 'await target().then(ok, err)');
    const sync = get(S, 'breakwater', 'executeSync, sync target');
    let s =
      `A closed circuit breaker: breakwater adds ${over(closed)} to an awaited async call; ` +
      list(
        [
          ['cockatiel 4', get(S, 'cockatiel 4', 'execute, async target')],
          ['cockatiel 3', get(S, 'cockatiel 3', 'execute, async target')],
          ['opossum', get(S, 'opossum', 'fire, async target (timeout: false)')],
          [
            'opossum with its defaults',
            get(S, 'opossum', 'fire, async target (all defaults: a 10 s timer per call)'),
          ],
        ],
        over,
      ) +
      '.';
    if (then) {
      s +=
        ` One \`.then(ok, err)\` on the target's promise, the least any wrapper that must see an async outcome ` +
        `adds, costs ${over(then)} by itself.`;
    }
    if (sync) {
      s += ` With a sync target, \`executeSync\` takes ${ns(sync.nsPerOp)} per call and allocates ${bytes(sync.bytesPerOp)}; the peers have no sync path.`;
    }
    const decorated = get(S, 'breakwater', 'decorated async method (@circuitBreaker)');
    if (decorated) {
      const direct = get(S, 'breakwater', decorated.versus);
      s += ` As \`@circuitBreaker\` on an async method the breaker adds ${decoratedText(decorated, direct)}.`;
    }
    out.push(s);
  }

  const O = 'breaker-open';
  const tryTrip = get(O, 'breakwater', 'tryExecute, trip');
  if (tryTrip) {
    const callOnly = get(O, 'breakwater', 'tryExecute call only, trip');
    const throwing = get(O, 'breakwater', 'execute (rejects, caught), trip');
    let s =
      `An open breaker refusing a call: breakwater's awaited \`tryExecute\` takes ${ns(tryTrip.nsPerOp)} and ` +
      `${bytes(tryTrip.bytesPerOp)} in all (the call itself ${callOnly ? ns(callOnly.nsPerOp) : '–'}), against ` +
      list(
        [
          [
            'cockatiel 4',
            get(O, 'cockatiel 4', 'execute (rejects, caught), tripped by 5 failures'),
          ],
          [
            'cockatiel 3',
            get(O, 'cockatiel 3', 'execute (rejects, caught), tripped by 5 failures'),
          ],
          ['opossum', get(O, 'opossum', 'fire (rejects, caught), tripped by 1 failure')],
        ],
        (r) => `${ns(r.nsPerOp)} and ${bytes(r.bytesPerOp)}`,
      ) +
      ' for a caught rejection.';
    if (throwing) {
      s +=
        ` breakwater's own throwing \`execute\` costs ${ns(throwing.nsPerOp)}: a rejected promise and its \`catch\` ` +
        'are expensive in V8 whatever library makes them, while the peers add a fresh `Error` with a stack on top.';
    }
    out.push(s);
  }

  const R = 'retry';
  const retry = get(R, 'breakwater', 'execute, maxAttempts 4 (3 retries)');
  if (retry) {
    out.push(
      `A retry whose first attempt succeeds: breakwater ${over(retry)}; ` +
        list(
          [
            ['cockatiel 4', get(R, 'cockatiel 4', 'execute, maxAttempts 3 (3 retries)')],
            ['cockatiel 3', get(R, 'cockatiel 3', 'execute, maxAttempts 3 (3 retries)')],
            ['p-retry', get(R, 'p-retry', 'pRetry, retries 3')],
          ],
          over,
        ) +
        '.',
    );
  }

  const T = 'timeout';
  const coop = get(T, 'breakwater', 'execute, cooperative');
  const aggr = get(T, 'breakwater', 'execute, aggressive');
  if (coop && aggr) {
    out.push(
      `A 1000 ms timeout around a call that succeeds at once: breakwater ${over(coop)} (cooperative) and ` +
        `${over(aggr)} (aggressive); ` +
        list(
          [
            ['cockatiel 4 cooperative', get(T, 'cockatiel 4', 'execute, cooperative')],
            ['aggressive', get(T, 'cockatiel 4', 'execute, aggressive')],
            ['cockatiel 3 cooperative', get(T, 'cockatiel 3', 'execute, cooperative')],
            ['aggressive', get(T, 'cockatiel 3', 'execute, aggressive')],
            [
              'opossum (breaker included)',
              get(T, 'opossum', 'fire, timeout 1000 (breaker included)'),
            ],
          ],
          over,
        ) +
        '. cockatiel builds an AbortController, a timer and listeners per call and aborts the signal on ' +
        'every successful return; breakwater shares one timer between all calls of a policy.',
    );
  }

  const B = 'bulkhead';
  const bh = get(B, 'breakwater', 'execute, async target');
  if (bh) {
    out.push(
      `A bulkhead of 100: breakwater ${over(bh)}; ` +
        list(
          [
            ['cockatiel 4', get(B, 'cockatiel 4', 'execute, async target')],
            ['cockatiel 3', get(B, 'cockatiel 3', 'execute, async target')],
            [
              'opossum (breaker included)',
              get(B, 'opossum', 'fire, capacity 100 (breaker included)'),
            ],
          ],
          over,
        ) +
        '.',
    );
  }

  const C = 'composed';
  const composed = get(C, 'breakwater', 'execute, async target');
  if (composed) {
    const ck4 = get(C, 'cockatiel 4', 'wrap(retry, breaker, bulkhead, timeout), async target');
    const ck3 = get(C, 'cockatiel 3', 'wrap(retry, breaker, bulkhead, timeout), async target');
    const op = get(C, 'opossum + p-retry', 'pRetry(() => breaker.fire()), async target');
    let s =
      `All four policies composed: breakwater's pipeline adds ${over(composed)} to an async call; ` +
      list(
        [
          ['cockatiel 4 `wrap`', ck4],
          ['cockatiel 3 `wrap`', ck3],
          ['opossum driven by p-retry', op],
        ],
        over,
      ) +
      `, that is ${ratio(ck4, composed)}, ${ratio(ck3, composed)} and ${ratio(op, composed)} breakwater's overhead.`;
    const rps = 10_000;
    const cpuMs = (composed.overheadNs * rps) / 1e6;
    s +=
      ` At ${rps.toLocaleString('en-US')} calls per second breakwater's pipeline costs about ${cpuMs.toFixed(1)} ms of CPU ` +
      `per second (${(cpuMs / 10).toFixed(2)} % of one core)`;
    if (ck4) {
      const ckMs = (ck4.overheadNs * rps) / 1e6;
      s += `, cockatiel 4's about ${ckMs.toFixed(0)} ms (${(ckMs / 10).toFixed(1)} %)`;
    }
    s += '.';
    const decorated = get(
      C,
      'breakwater',
      'decorated async method (@retry @circuitBreaker @timeout @bulkhead)',
    );
    if (decorated) {
      const direct = get(C, 'breakwater', decorated.versus);
      s += ` Stacked as method decorators on an async method, the same four policies add ${decoratedText(decorated, direct)}.`;
    }
    out.push(s);
  }

  const L = 'rate-limiter';
  const rl = get(L, 'rate-limiter-flexible', 'consume(key)');
  if (rl) {
    const bn = get(L, 'bottleneck', 'schedule(target)');
    const bn100 = get(L, 'bottleneck', 'schedule(target), 100 in flight');
    let s = `A rate-limiter permit: rate-limiter-flexible's \`consume\` takes ${ns(rl.nsPerOp)} and ${bytes(rl.bytesPerOp)} per call`;
    if (bn) {
      s +=
        `; bottleneck's \`schedule\` takes ${ms(bn.nsPerOp)} per job one at a time` +
        `${bn100 ? ` and ${ms(bn100.nsPerOp)} per job with 100 in flight` : ''}, because its local ` +
        'datastore yields through `setTimeout(0)` at each step';
    }
    const tryAcq = get(L, 'breakwater', 'tryAcquire()');
    const acq = get(L, 'breakwater', 'acquire()');
    const keyedBw = report.rows.find(
      (r) =>
        r.scenario === L && r.library === 'breakwater' && r.variant.startsWith('KeyedRateLimiter'),
    );
    const keyedRl = report.rows.find(
      (r) =>
        r.scenario === L && r.library === 'rate-limiter-flexible' && r.variant.endsWith('keys'),
    );
    if (tryAcq && acq) {
      s +=
        `. breakwater's \`tryAcquire()\` decides in ${ns(tryAcq.nsPerOp)} and ${bytes(tryAcq.bytesPerOp)} (it returns a ` +
        `number, no promise); its promise-returning \`acquire()\` adds ${over(acq)} to an awaited call, ` +
        `against ${over(rl)} for \`consume\` (${ratio(rl, acq)})`;
      if (keyedBw && keyedRl) {
        s += `; with ${keyedBw.variant.split(', ')[1]}, ${ns(keyedBw.nsPerOp)} against ${ns(keyedRl.nsPerOp)}`;
      }
    }
    out.push(`${s}.`);
  }

  const redis = report.rows.filter(
    (r) => r.scenario === 'rate-limiter-redis' && r.decisionsPerSecond !== undefined,
  );
  if (redis.length > 0) {
    const f1 = (x) => (x === undefined ? '–' : Number(x).toLocaleString('en-US'));
    out.push(
      'Rate limits on Redis (one process, a redis-server on loopback sharing the machine’s cores; ' +
        'round trips counted by the server):\n\n' +
        '| library | row | decisions/s | p50 / p99 µs | round trips per 1,000 | admitted per 1,000 |\n' +
        '|---|---|---:|---:|---:|---:|\n' +
        redis
          .map(
            (r) =>
              `| ${r.library} | ${r.variant} | ${f1(Math.round(r.decisionsPerSecond))} | ` +
              `${f1(r.p50Us)} / ${f1(r.p99Us)} | ${f1(r.roundTripsPer1000)} | ` +
              `${f1(r.admittedPer1000)} |`,
          )
          .join('\n'),
    );
  }

  const scale = report.rows.filter(
    (r) => r.scenario === 'timeouts-at-scale' && r.library !== 'bare',
  );
  if (scale.length > 0) {
    const n = scale[0].opsPerCall;
    out.push(
      `${n.toLocaleString('en-US')} calls in flight at once, each with a 1000 ms timeout (time for the whole batch, ` +
        'over the bare batch, and bytes per call): ' +
        scale
          .map(
            (r) =>
              `${r.library} ${r.variant.replace(/^[\d,]+ × /, '')} ${plus((r.overheadNs * n) / 1e6, (x) => `${x.toFixed(1)} ms`)}, ${bytes(r.bytesPerOp)}` +
              (r.timedOutCalls > 0
                ? ` (${r.timedOutCalls.toLocaleString('en-US')} of ${r.settledCalls.toLocaleString('en-US')} calls timed out: starting the batch took longer than 1000 ms)`
                : ''),
          )
          .join('; ') +
        '.' +
        (scale.every((r) => r.timedOutCalls === 0)
          ? ' No call timed out: every batch was started and settled within its timeout.'
          : ''),
    );
  }

  const inst = report.rows.filter(
    (r) => r.scenario === 'breaker-instances' && r.library !== 'bare',
  );
  if (inst.length > 0) {
    const n = inst[0].opsPerCall;
    out.push(
      `Making ${n.toLocaleString('en-US')} breakers (time per breaker, bytes each keeps alive): ` +
        inst
          .map(
            (r) =>
              `${r.library} ${r.variant.replace(/^[\d,]+ × /, '')} ${ns(r.nsPerOp)}, ${bytes(r.bytesPerOp)}`,
          )
          .join('; ') +
        '. opossum also arms two 1 s intervals per breaker.',
    );
  }

  const K = 'keyed-registry';
  const keyed = report.rows.filter((r) => r.scenario === K);
  const idle = keyed.find((r) => r.library === 'breakwater' && r.variant.includes('idle'));
  const churn = keyed.find((r) => r.library === 'breakwater' && r.variant.includes('registry'));
  if (idle && churn) {
    const idleMap = keyed.find((r) => r.variant === idle.baseline);
    const churnMap = keyed.find((r) => r.variant === churn.baseline);
    const mb = (x) => `${(x / 2 ** 20).toFixed(1)} MiB`;
    const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;
    out.push(
      `Keyed breakers (\`registry.keyedCircuitBreaker('api', key)\`, default count window of 100): ` +
        `${idle.variant} keep ${bytes(idle.bytesPerOp)} each after GC` +
        (idleMap
          ? ` (a Map of as many keys to empty objects keeps ${bytes(idleMap.bytesPerOp)} per key)`
          : '') +
        `, made and called at ${ns(idle.nsPerOp)} per key. ${churn.variant}: the heap holds ` +
        `${mb(churn.bytesAtCap)} once the cap is reached, ${mb(churn.bytesAfterTwoRounds)} after the second round ` +
        `of keys and ${mb(churn.bytesAtEnd)} at the end (${pct(churn.heapGrowthPct)} over the cap, ` +
        `${pct(churn.heapGrowthAfterTwoRoundsPct)} over the second round), at ${ns(churn.nsPerOp)} per key` +
        (churnMap
          ? `; a plain Map capped the same way grows ${pct(churnMap.heapGrowthPct)} over its cap and ` +
            `${pct(churnMap.heapGrowthAfterTwoRoundsPct)} over its second round: ` +
            `${mb(churnMap.bytesAfterTwoRounds - churnMap.bytesAtCap)} between the cap and the second round, against ` +
            `the registry's ${mb(churn.bytesAfterTwoRounds - churn.bytesAtCap)} (a Map doubles its table once when deletions start, then stays flat)`
          : '') +
        '.',
    );
  }

  const M = 'metrics';
  const off = get(M, 'breakwater', 'execute, async target, metrics: false');
  const latency = get(M, 'breakwater', 'execute, async target, metrics: { latency: true }');
  const subscribed = report.rows.find(
    (r) => r.scenario === M && r.library === 'breakwater' && r.variant.includes('diagnostics'),
  );
  if (off && latency && subscribed) {
    out.push(
      `Observability on the closed breaker: with latency metrics on (one call in 16 timed, so two ` +
        `clock reads and a histogram increment every 16th call) a call costs ` +
        `${plus(latency.versusNs, ns)} and ${plus(latency.versusBytes, bytes)} over the same breaker ` +
        `with \`metrics: false\` (timed in alternating batches in one process); with a ` +
        `\`diagnostics_channel\` subscriber on every breakwater channel, ${plus(subscribed.versusNs, ns)}: ` +
        'the happy path publishes nothing, and a channel nobody subscribes to costs one property read.',
    );
  }

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

/** What is known of a missed budget of breakwater's own, with figures from the same run. */
function ownMissNotes(report) {
  const missed = new Set(report.budgets.filter((b) => b.pass === false).map((b) => b.id));
  const out = [];
  if (missed.has('decorated-vs-direct')) {
    out.push(
      '**Decorated method vs the pipeline called directly.** A decorated call goes through the ' +
        'method’s wrapper (its plan lookup and argument-count check) and a closure that captures ' +
        '`this`, where the direct call makes a closure over a local object.',
    );
  }
  if (missed.has('rate-limiter-redis-throughput')) {
    out.push(
      '**Redis rate limiter.** Its process is not pinned: the client and the Redis server share the ' +
        `machine's ${report.machine.cores} cores with each other and with whatever else runs (load ` +
        `average ${report.loadAverage.start} at the start of the run, ${report.loadAverage.end} at the ` +
        'end), and a decision at concurrency 100 waits for the time the server gets.',
    );
  }
  return out;
}

/**
 * What makes a missed peer budget miss, from reference rows and decompositions measured in the
 * same run. Only budgets whose cause was measured get a note.
 */
function missNotes(report) {
  const get = finder(report);
  const missed = new Set(report.budgets.filter((b) => b.pass === false).map((b) => b.id));
  const out = [];
  const then = get('breaker-closed', 'reference', 'await target().then(ok, err)');
  const clock = get('timeout', 'reference', 'performance.now()');

  if (missed.has('closed-breaker-vs-cockatiel') || missed.has('closed-breaker')) {
    const bw = get('breaker-closed', 'breakwater', 'execute, async target');
    const ck = get('breaker-closed', 'cockatiel 4', 'execute, async target');
    const sync = get('breaker-closed', 'breakwater', 'executeSync, sync target');
    const own = report.budgets
      .find((b) => b.id === 'closed-breaker')
      ?.checks.find((c) => c.metric === 'overheadNs');
    if (bw && then && ck) {
      const limit = ck.overheadNs / 4;
      const room = limit - then.overheadNs;
      out.push(
        `**Closed breaker vs cockatiel.** breakwater adds ${ns(bw.overheadNs)}; a quarter of cockatiel 4's ` +
          `${ns(ck.overheadNs)} is ${ns(ck.overheadNs / 4)}. A promise-returning \`execute\` must see the ` +
          'outcome of the target’s promise, which takes at least one derived promise and its reaction: ' +
          `\`await target().then(ok, err)\` alone adds ${ns(then.overheadNs)} and ${bytes(then.overheadBytes)}. ` +
          `The breaker’s own work (admission, outcome, window) is the rest: about ` +
          `${ns(bw.overheadNs - then.overheadNs)} and ${bytes(bw.overheadBytes - then.overheadBytes)}. ` +
          (room > 0
            ? `To meet the budget the breaker would have to fit in ${ns(room)} on top of that reaction.`
            : 'That reaction alone already exceeds the budget.') +
          (sync && sync.nsPerOp <= limit
            ? ` Without a promise the budget is met: \`executeSync\` takes ${ns(sync.nsPerOp)} per call in all.`
            : '') +
          (own?.pass === false
            ? ` The library's own limit of ${ns(own.limit)} over the bare call is missed by ` +
              `${ns(own.value - own.limit)} for the same reason.`
            : ''),
      );
    }
  }

  if (missed.has('open-rejection-vs-peers')) {
    const tryTrip = get('breaker-open', 'breakwater', 'tryExecute, trip');
    const tryForced = get('breaker-open', 'breakwater', 'tryExecute, forceOpen');
    const callTrip = get('breaker-open', 'breakwater', 'tryExecute call only, trip');
    const callForced = get('breaker-open', 'breakwater', 'tryExecute call only, forceOpen');
    const ck = get(
      'breaker-open',
      'cockatiel 4',
      'execute (rejects, caught), tripped by 5 failures',
    );
    const thrown = get('breaker-open', 'reference', 'async throw new Error() (rejects, caught)');
    if (tryTrip && callTrip && callForced && ck) {
      out.push(
        `**Open-breaker refusal.** A tripped breaker refuses through \`tryExecute\` in ${ns(callTrip.nsPerOp)} ` +
          `(the call, not awaited) and ${bytes(callTrip.bytesPerOp)}; held open by hand (\`forceOpen\`), in ` +
          `${ns(callForced.nsPerOp)} and ${bytes(callForced.bytesPerOp)}. Neither reads the clock: a tripped ` +
          'breaker learns from a timer shared by all open breakers when its break may be over' +
          (clock ? ` (\`performance.now()\` would cost ${ns(clock.nsPerOp)} here)` : '') +
          '. Awaited, over the bare call, the tripped refusal adds ' +
          `${ns(tryTrip.overheadNs)}` +
          (tryForced ? ` and the forced one ${ns(tryForced.overheadNs)}` : '') +
          `; cockatiel 4's caught rejection adds ${ns(ck.overheadNs)}` +
          (thrown
            ? `, of which a bare async function throwing a new \`Error\` (caught) already costs ${ns(thrown.overheadNs)}`
            : '') +
          '.' +
          (tryForced && tryForced.overheadNs > 0 && ck.overheadNs / tryForced.overheadNs >= 100
            ? ' The forced-open path would meet the 100× budget; the tripped one, which the peers’ state matches, does not.'
            : ''),
      );
    }
  }

  if (missed.has('timeout-vs-opossum-cooperative') || missed.has('timeout-vs-opossum-aggressive')) {
    const coop = get('timeout', 'breakwater', 'execute, cooperative');
    const aggr = get('timeout', 'breakwater', 'execute, aggressive');
    const op = get('timeout', 'opossum', 'fire, timeout 1000 (breaker included)');
    if (coop && aggr && op) {
      let s =
        `**Timeout vs opossum.** opossum's timeout (its breaker included) adds ${ns(op.overheadNs)}, so the ` +
        `budget allows ${ns(op.overheadNs / 5)}; breakwater adds ${ns(coop.overheadNs)} (cooperative) and ` +
        `${ns(aggr.overheadNs)} (aggressive). A cooperative timeout reads no clock per call` +
        `${clock ? ` (a reading would cost ${ns(clock.nsPerOp)})` : ''}: it records the call in the policy's shared ` +
        'queue, stamped at the next tick of its one timer, reuses a pooled execution record whose promise ' +
        'handlers are bound once, and allocates only the small context the function receives ' +
        `(${plus(coop.overheadBytes, bytes)} in all)` +
        `${then ? `, on top of the derived promise any async wrapper pays (${ns(then.overheadNs)})` : ''}.`;
      s +=
        ` The aggressive strategy costs ${plus(aggr.overheadNs - coop.overheadNs, ns)} and ` +
        `${plus(aggr.overheadBytes - coop.overheadBytes, bytes)} more: an outer promise the call can settle ` +
        'before the function does, and its two settle functions.';
      out.push(s);
    }
  }

  if (missed.has('composed-vs-cockatiel') || missed.has('composed-vs-opossum-p-retry')) {
    const c = get('composed', 'breakwater', 'execute, async target');
    const parts = [
      ['retry', get('retry', 'breakwater', 'execute, maxAttempts 4 (3 retries)')],
      ['breaker', get('breaker-closed', 'breakwater', 'execute, async target')],
      ['timeout', get('timeout', 'breakwater', 'execute, cooperative')],
      ['bulkhead', get('bulkhead', 'breakwater', 'execute, async target')],
    ];
    if (c && parts.every(([, r]) => r !== undefined)) {
      const largest = parts.reduce((a, b) => (b[1].overheadNs > a[1].overheadNs ? b : a))[0];
      out.push(
        `**Composed pipeline.** breakwater's four policies add ${ns(c.overheadNs)} together; alone they add ` +
          `${parts.map(([name, r]) => `${name} ${ns(r.overheadNs)}`).join(', ')}. Each single-policy figure ` +
          'includes the derived promise every async wrapper pays, which the pipeline pays once. The largest ' +
          `share is the ${largest}'s.`,
      );
    }
  }
  return out;
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

export function renderDoc(report) {
  const m = report.machine;
  const lib = report.library;
  const peerBudgets = report.budgets.filter((b) => b.kind === 'ratio' || b.kind === 'na');
  const limitBudgets = report.budgets.filter((b) => b.kind === 'limit' || b.kind === 'versus');
  const summary = (list) => list.map((b) => `${verdict(b.pass)}: ${b.label}`).join(' · ');
  const notes = missNotes(report);
  const ownNotes = ownMissNotes(report);
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

${reading(report)}

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
