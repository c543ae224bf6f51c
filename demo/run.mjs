// @ts-check
/**
 * The demo: one scripted dependency called at a steady rate through a breakwater pipeline, and
 * a second instance of it called with a plain fetch under the same load at the same time. Prints
 * one line per second for the protected run, then a summary of what callers got from each run
 * within their deadline, how long they waited, and the load each run put on its dependency.
 *
 * Usage: node demo/run.mjs [--seconds 20 | --phases 5,5,5,5] [--rate 50] [--deadline 1000]
 *                          [--failure error|reset] [--slow-latency 1500] [--dashboard [--port N]]
 */
import { parseArgs } from 'node:util';
import { serveDashboard, untilStopped } from './dashboard.mjs';
import { phaseAt, scriptedPhases } from './dependency.mjs';
import { prepare } from './play.mjs';
import { formatMs, formatSecond, formatSummary, secondHeader, totals } from './report.mjs';

const USAGE = `Usage: npm run demo -- [options]

  --seconds N         length of the whole run; the four phases (healthy, failing, slow,
                      recovered) get N/4 s each (default 20)
  --phases A,B,C,D    seconds of each phase instead (e.g. 5,5,5,5)
  --rate N            calls per second started by each run (default 50)
  --deadline MS       how long a caller waits for an answer: a call is good only if the
                      dependency answered within it; the protection's timeouts derive from
                      it (default 1000)
  --failure KIND      how the failing phase fails: error (503 at once, the default) or reset
                      (the connection is dropped)
  --slow-latency MS   how long the slow phase takes to answer (default 1500)
  --dashboard         serve a live dashboard of the protected run (breakwater/observability) while it
                      plays out, and keep serving it until Ctrl-C
  --port N            the dashboard's port on 127.0.0.1 (default 0: a free one)
  --help              this text`;

/**
 * @typedef {object} Settings
 * @property {number[]} phaseMs
 * @property {number} rate
 * @property {number} deadline
 * @property {'error' | 'reset'} failure
 * @property {number} slowLatency
 * @property {boolean} dashboard
 * @property {number} port The dashboard's port (0: a free one).
 */

/**
 * @param {string[]} argv
 * @returns {Settings | 'help'}
 */
function parse(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string' },
      phases: { type: 'string' },
      rate: { type: 'string' },
      deadline: { type: 'string' },
      failure: { type: 'string' },
      'slow-latency': { type: 'string' },
      dashboard: { type: 'boolean' },
      port: { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  if (values.seconds !== undefined && values.phases !== undefined)
    throw new Error('Give --seconds or --phases, not both');
  /** @type {number[]} */
  let phaseSeconds;
  if (values.phases !== undefined) {
    phaseSeconds = values.phases.split(',').map((s) => positive('--phases', s));
    if (phaseSeconds.length !== 4)
      throw new Error(`Expected 4 comma-separated numbers for --phases, got "${values.phases}"`);
  } else {
    const seconds = values.seconds === undefined ? 20 : positive('--seconds', values.seconds);
    phaseSeconds = [1, 2, 3, 4].map(() => seconds / 4);
  }
  if (values.port !== undefined && !values.dashboard)
    throw new Error('Give --port with --dashboard');
  const port = values.port === undefined ? 0 : Number(values.port);
  if (values.port !== undefined && (!/^\d+$/.test(values.port) || port > 65535))
    throw new Error(`Expected --port to be an integer in [0, 65535], got "${values.port}"`);
  const failure = values.failure ?? 'error';
  if (failure !== 'error' && failure !== 'reset')
    throw new Error(`Expected --failure to be error or reset, got "${failure}"`);
  return {
    phaseMs: phaseSeconds.map((s) => s * 1000),
    rate: values.rate === undefined ? 50 : positive('--rate', values.rate),
    deadline: values.deadline === undefined ? 1000 : positive('--deadline', values.deadline),
    failure,
    slowLatency:
      values['slow-latency'] === undefined
        ? 1500
        : positive('--slow-latency', values['slow-latency']),
    dashboard: values.dashboard ?? false,
    port,
  };
}

/**
 * @param {string} flag
 * @param {string} text
 * @returns {number}
 */
function positive(flag, text) {
  const n = Number(text);
  if (!(n > 0) || !Number.isFinite(n))
    throw new Error(`Expected ${flag} to be a positive number, got "${text}"`);
  return n;
}

/**
 * Calls `onSecond(k)` at k s for k = 1..count (by `now`), each exactly once and in order.
 * @param {number} count
 * @param {() => number} now
 * @param {(second: number) => void} onSecond
 * @returns {Promise<void>}
 */
function everySecond(count, now, onSecond) {
  return new Promise((resolve) => {
    let next = 1;
    const tick = () => {
      // Timers may fire a little early by `now`: wait again rather than cut a second short.
      while (next <= count && now() >= next * 1000) onSecond(next++);
      if (next > count) resolve();
      else setTimeout(tick, Math.max(1, next * 1000 - now()));
    };
    if (count === 0) resolve();
    else setTimeout(tick, 1000);
  });
}

/** @param {import('./dependency.mjs').Phase} phase */
function describe(phase) {
  const latency = phase.latency ?? 0;
  const status = phase.behaviour === 'ok' ? '200' : '503';
  const answer =
    phase.behaviour === 'reset'
      ? 'connections dropped'
      : `${status} ${latency === 0 ? 'at once' : `after ${latency} ms`}`;
  return `${phase.name} ${seconds(phase.ms)} (${answer})`;
}

/** @param {number} ms */
function seconds(ms) {
  return `${Number((ms / 1000).toFixed(2))} s`;
}

/** @param {Settings} settings */
async function main({ phaseMs, rate, deadline, failure, slowLatency, dashboard, port }) {
  const phases = scriptedPhases({ phaseMs, failure, slowLatency });
  const durationMs = phaseMs.reduce((a, b) => a + b, 0);
  // Long enough to see, short enough that the breaker probes again within the failing phase.
  const breakDuration = Math.round(phaseMs[1] * 0.4);

  const run = await prepare({ phases, deadline, breakDuration });
  const { guarded, protectedDependency, plainDependency, transitions, now } = run;
  /** @type {import('./dashboard.mjs').Dashboard | undefined} */
  let page;
  try {
    if (dashboard) page = await serveDashboard({ policies: guarded.policies, port });

    const { retry, timeout, bulkhead, breaker } = guarded.settings;
    const w = breaker.window;
    console.log(
      `breakwater demo: ${rate} calls/s for ${seconds(durationMs)}, two runs at once;` +
        ` callers wait ${deadline} ms for an answer`,
    );
    console.log(`  dependency:  ${phases.map(describe).join(', ')}`);
    console.log(
      `  protected:   fallback(last good answer) -> retry(${retry.maxAttempts} attempts, ${retry.delay} ms) -> ` +
        `breaker(last ${w.size} attempts, >= ${w.minimumCalls}, failures >= ${breaker.failureRateThreshold * 100}%,` +
        ` open ${breakDuration} ms) -> timeout(${timeout} ms) -> bulkhead(${bulkhead.maxConcurrent})`,
    );
    console.log(
      '  unprotected: plain fetch, no timeout, against a second instance of the dependency',
    );
    if (page !== undefined) {
      console.log(`  dashboard:   ${page.url} (also /health, /metrics); serves until Ctrl-C`);
    }
    console.log('');
    console.log(
      `protected run, per second (good: answered within ${deadline} ms; late: after it;` +
        ' refused: turned away by the open breaker or the full bulkhead, a fallback served;' +
        ' reached: requests the dependency got)',
    );
    console.log(secondHeader());

    const loads = run.play({ rate, durationMs });
    const lines = everySecond(Math.ceil(durationMs / 1000), now, (second) => {
      const from = (second - 1) * 1000;
      const to = second * 1000;
      console.log(
        formatSecond({
          second,
          phase: phaseAt(phases, (from + Math.min(to, durationMs)) / 2).name,
          state: guarded.breaker.state,
          totals: totals(loads.guarded.samples, protectedDependency.arrivals(), deadline, from, to),
          transitions: transitions.filter((tr) => tr.t >= from && tr.t < to),
        }),
      );
    });
    await Promise.all([loads.guarded.done, loads.plain.done, lines]);

    console.log('');
    console.log('summary');
    for (const line of formatSummary({
      deadline,
      guarded: {
        ...totals(loads.guarded.samples, protectedDependency.arrivals(), deadline, 0),
        peakInFlight: protectedDependency.peakInFlight(),
      },
      plain: {
        ...totals(loads.plain.samples, plainDependency.arrivals(), deadline, 0),
        peakInFlight: plainDependency.peakInFlight(),
      },
    }))
      console.log(line);
    const skipped = loads.guarded.skipped() + loads.plain.skipped();
    if (skipped > 0) console.log(`(${skipped} calls not started: too many already in flight)`);
    const lag = Math.max(loads.guarded.maxLag(), loads.plain.maxLag());
    // Waits count from when a call was due, so a held-up load generator shows in them.
    if (lag >= 50) {
      console.log(
        `(a busy machine: calls started up to ${formatMs(lag)} ms after they were due;` +
          ' that delay counts in their wait)',
      );
    }
    if (page !== undefined) {
      console.log('');
      console.log(`The run is over; the dashboard still serves ${page.url}: press Ctrl-C to stop.`);
      await untilStopped();
    }
  } finally {
    await Promise.all([run.close(), page?.close()]);
  }
}

/** @type {Settings | 'help'} */
let settings;
try {
  settings = parse(process.argv.slice(2));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  console.error(USAGE);
  process.exit(2);
}
if (settings === 'help') console.log(USAGE);
else await main(settings);
