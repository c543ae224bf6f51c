// @ts-check
/**
 * The demo: one scripted dependency called at a steady rate through a breakwater pipeline, and
 * a second instance of it called with a plain fetch under the same load at the same time. Prints
 * one line per second for the protected run, then a table comparing both runs.
 *
 * Usage: node demo/run.mjs [--seconds 20 | --phases 5,5,5,5] [--rate 50]
 *                          [--failure error|reset] [--slow-latency 1500] [--dashboard [--port N]]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { plainCaller, protectedCaller, protection } from './callers.mjs';
import { serveDashboard, untilStopped } from './dashboard.mjs';
import { phaseAt, scriptedPhases, start } from './dependency.mjs';
import { startLoad } from './load.mjs';
import { formatSecond, formatSummary, secondHeader, totals } from './report.mjs';

const USAGE = `Usage: npm run demo -- [options]

  --seconds N         length of the whole run; the four phases (healthy, failing, slow,
                      recovered) get N/4 s each (default 20)
  --phases A,B,C,D    seconds of each phase instead (e.g. 5,5,5,5)
  --rate N            calls per second started by each run (default 50)
  --failure KIND      how the failing phase fails: error (503 at once, the default) or reset
                      (the connection is dropped)
  --slow-latency MS   how long the slow phase takes to answer (default 1500)
  --dashboard         serve a live dashboard of the protected run (breakwater/http) while it
                      plays out, and keep serving it until Ctrl-C
  --port N            the dashboard's port on 127.0.0.1 (default 0: a free one)
  --help              this text`;

/**
 * @typedef {object} Settings
 * @property {number[]} phaseMs
 * @property {number} rate
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
async function main({ phaseMs, rate, failure, slowLatency, dashboard, port }) {
  const phases = scriptedPhases({ phaseMs, failure, slowLatency });
  const durationMs = phaseMs.reduce((a, b) => a + b, 0);
  // Long enough to see, short enough that the breaker probes again within the failing phase.
  const breakDuration = Math.round(phaseMs[1] * 0.4);

  let epoch = performance.now();
  const now = () => performance.now() - epoch;
  const protectedDependency = await start({ phases, now });
  const plainDependency = await start({ phases, now });
  /** @type {import('./dashboard.mjs').Dashboard | undefined} */
  let page;
  try {
    const guarded = protectedCaller(protectedDependency.url, { breakDuration });
    const plain = plainCaller(plainDependency.url);
    if (dashboard) page = await serveDashboard({ policies: guarded.policies, port });
    /** @type {import('./report.mjs').Transition[]} */
    const transitions = [];
    guarded.breaker.onStateChange((e) => transitions.push({ t: now(), from: e.from, to: e.to }));

    const { retry, timeout, bulkhead, breaker } = protection;
    const w = breaker.window;
    console.log(`breakwater demo: ${rate} calls/s for ${seconds(durationMs)}, two runs at once`);
    console.log(`  dependency:  ${phases.map(describe).join(', ')}`);
    console.log(
      `  protected:   retry(${retry.maxAttempts} attempts, ${retry.delay} ms) -> ` +
        `breaker(last ${w.size} calls, >= ${w.minimumCalls}, failures >= ${breaker.failureRateThreshold * 100}%` +
        ` or slow (>= ${breaker.slowCallDuration} ms) >= ${breaker.slowCallRateThreshold * 100}%,` +
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
      'protected run, per second (rejected: ended by a refusal of the open breaker or the full' +
        ' bulkhead; reached: requests the dependency got)',
    );
    console.log(secondHeader());

    epoch = performance.now();
    const guardedLoad = startLoad({ call: guarded.call, rate, durationMs, now });
    const plainLoad = startLoad({ call: plain.call, rate, durationMs, now });
    const lines = everySecond(Math.ceil(durationMs / 1000), now, (second) => {
      const from = (second - 1) * 1000;
      const to = second * 1000;
      console.log(
        formatSecond({
          second,
          phase: phaseAt(phases, (from + Math.min(to, durationMs)) / 2).name,
          state: guarded.breaker.state,
          totals: totals(guardedLoad.samples, protectedDependency.arrivals(), from, to),
          transitions: transitions.filter((tr) => tr.t >= from && tr.t < to),
        }),
      );
    });
    await Promise.all([guardedLoad.done, plainLoad.done, lines]);

    console.log('');
    console.log('summary');
    for (const line of formatSummary(
      totals(guardedLoad.samples, protectedDependency.arrivals()),
      totals(plainLoad.samples, plainDependency.arrivals()),
    ))
      console.log(line);
    const skipped = guardedLoad.skipped() + plainLoad.skipped();
    if (skipped > 0) console.log(`(${skipped} calls not started: too many already in flight)`);
    if (page !== undefined) {
      console.log('');
      console.log(`The run is over; the dashboard still serves ${page.url}: press Ctrl-C to stop.`);
      await untilStopped();
    }
    guarded.dispose();
  } finally {
    await Promise.all([protectedDependency.close(), plainDependency.close(), page?.close()]);
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
