/**
 * Timer cost at scale: 10,000 calls in flight at once, each through a 1000 ms timeout. The
 * targets all wait on one shared promise, resolved on the next event-loop turn (setImmediate)
 * after the last call started, so every call is in flight together. One op is the whole batch;
 * figures are per call. breakwater (cooperative, aggressive), cockatiel 4 and 3 (cooperative,
 * aggressive) and opossum's `timeout: 1000` (breaker included).
 *
 * A call times out only if starting the whole batch takes longer than its timeout, which a
 * library that costs enough per call can reach on a busy machine. Such calls are counted, not
 * treated as a failure of the run: the report shows how many timed out.
 */
import { COCKATIELS, ckTimeout, LIB, opTimeout, shutdown } from '../lib/peers.mjs';
import { timeoutPipeline } from '../lib/pipelines.mjs';
import { bytes, plus } from '../lib/prose.mjs';

export const title = '10,000 calls in flight, each with a 1000 ms timeout';
export const order = 10;

const STRATEGIES = ['cooperative', 'aggressive'];

/** The timeout errors of breakwater, cockatiel and opossum. */
const isTimeout = (e) =>
  e?.code === 'ERR_BREAKWATER_TIMEOUT' ||
  e?.isTaskCancelledError === true ||
  e?.code === 'ETIMEDOUT';

/**
 * An op that starts `n` calls of `call(target)`, releases their shared promise on the next
 * turn and awaits them all. It resolves with the number of calls that got the target's 1; a
 * call that timed out is counted in `timedOut`, any other failure rejects. `started` counts
 * the targets called before the release.
 */
function batch(n, call) {
  const pending = new Array(n);
  let release;
  let gate;
  let started = 0;
  const counts = { settled: 0, timedOut: 0 };
  const target = () => {
    started++;
    return gate;
  };
  const open = () => release(1);
  const tally = (results) => {
    let ok = 0;
    for (const r of results) {
      if (r.status === 'fulfilled' && r.value === 1) ok++;
      else if (r.status === 'rejected' && isTimeout(r.reason)) counts.timedOut++;
      else throw r.reason ?? new Error(`unexpected value ${String(r.value)}`);
    }
    counts.settled += results.length;
    return ok;
  };
  const op = () => {
    gate = new Promise((resolve) => {
      release = resolve;
    });
    started = 0;
    for (let i = 0; i < n; i++) pending[i] = call(target);
    setImmediate(open);
    return Promise.allSettled(pending).then(tally);
  };
  return { op, started: () => started, counts };
}

function row(library, variant, n, make, baseline) {
  let probe;
  return {
    library,
    variant,
    kind: 'async',
    baseline,
    opsPerCall: n,
    prepare: () => {
      const { call, dispose } = make();
      probe = batch(n, call);
      return { op: probe.op, dispose };
    },
    // Every target was called before the shared promise resolved, and every call either got
    // its 1 or timed out.
    check: (o) => o.ok && probe.started() === n && o.value + probe.counts.timedOut === n,
    // Calls this process made through the row (warm-up included), and how many timed out.
    extra: () => ({ settledCalls: probe.counts.settled, timedOutCalls: probe.counts.timedOut }),
  };
}

export function rows({ quick }) {
  const n = quick ? 1_000 : 10_000;
  const count = n.toLocaleString('en-US');
  const bare = `${count} × target() in flight, Promise.allSettled`;
  const out = [row('bare', bare, n, () => ({ call: (t) => t() }))];
  for (const strategy of STRATEGIES) {
    out.push(
      row(
        LIB.breakwater,
        `${count} × execute, ${strategy}`,
        n,
        () => {
          const p = timeoutPipeline(strategy);
          return { call: (t) => p.execute(t), dispose: () => p.dispose() };
        },
        bare,
      ),
    );
  }
  for (const { library, ck } of COCKATIELS) {
    for (const strategy of STRATEGIES) {
      out.push(
        row(
          library,
          `${count} × execute, ${strategy}`,
          n,
          () => {
            const p = ckTimeout(ck, strategy);
            return { call: (t) => p.execute(t) };
          },
          bare,
        ),
      );
    }
  }
  out.push(
    row(
      LIB.opossum,
      `${count} × fire, timeout 1000 (breaker included)`,
      n,
      () => {
        let target;
        // opossum binds its action when the breaker is made; the batch hands the target per call.
        const b = opTimeout(() => target());
        return {
          call: (t) => {
            target = t;
            return b.fire();
          },
          dispose: () => shutdown(b),
        };
      },
      bare,
    ),
  );
  return out;
}

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ report }) {
  const scale = report.rows.filter(
    (r) => r.scenario === 'timeouts-at-scale' && r.library !== 'bare',
  );
  if (scale.length > 0) {
    const n = scale[0].opsPerCall;
    return (
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
        : '')
    );
  }
}
