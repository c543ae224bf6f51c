// @ts-check
/**
 * What the demo prints, computed from recorded samples only: per-second lines and the final
 * summary. No clock, no I/O.
 */

/**
 * How one call through the load generator ended underneath any fallback.
 * - `ok`: the dependency answered with a status below 500;
 * - `failed`: an error status, a network error or a timeout;
 * - `rejected`: a policy refused the call without calling the dependency (open breaker, full
 *   bulkhead).
 * @typedef {'ok' | 'failed' | 'rejected'} Outcome
 */

/**
 * One finished call.
 * @typedef {object} Sample
 * @property {number} t When the call finished, in ms since the run began.
 * @property {number} latency How long the caller waited, in ms, from when the call was due.
 * @property {Outcome} outcome
 * @property {boolean} [fallback] The caller was served a fallback answer instead of the failure.
 */

/**
 * A breaker state change, in ms since the run began.
 * @typedef {{ t: number, from: string, to: string }} Transition
 */

/**
 * Counts over a span of time, judged against the caller's deadline: whatever came after it
 * (an answer, a fallback or an error) is `late`, the caller had given up; the other counts are
 * of calls that ended within it.
 * @typedef {object} Totals
 * @property {number} calls
 * @property {number} good Answered by the dependency within the deadline.
 * @property {number} fallback Served a fallback within the deadline.
 * @property {number} failed Ended with an error within the deadline, without a fallback.
 * @property {number} late Ended after the deadline, however.
 * @property {number} rejected Refused by a policy without calling the dependency (whether or
 *   not a fallback stood in).
 * @property {number} waited Total time callers waited, in ms.
 * @property {number} median Median wait (NaN if none).
 * @property {number} p99 99th percentile wait (NaN if none).
 * @property {number} max Longest wait (NaN if none).
 * @property {number} reached Requests that reached the dependency.
 */

/**
 * The 99th percentile by the nearest-rank method: the smallest value that at least 99% of the
 * values are less than or equal to. NaN for no values.
 * @param {readonly number[]} values
 * @returns {number}
 */
export function p99(values) {
  return percentile(values, 0.99);
}

/**
 * The `q` quantile (0 < q <= 1) by the nearest-rank method.
 * @param {readonly number[]} values
 * @param {number} q
 * @returns {number}
 */
export function percentile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

/**
 * Totals of the calls that finished, and of the requests that arrived, in [from, to).
 * @param {readonly Sample[]} samples
 * @param {readonly number[]} arrivals When requests reached the dependency (ms since the run began).
 * @param {number} deadline How long a caller waits for an answer, in ms.
 * @param {number} [from]
 * @param {number} [to]
 * @returns {Totals}
 */
export function totals(
  samples,
  arrivals,
  deadline,
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
) {
  let good = 0;
  let fallback = 0;
  let failed = 0;
  let late = 0;
  let rejected = 0;
  let waited = 0;
  /** @type {number[]} */
  const latencies = [];
  for (const s of samples) {
    if (s.t < from || s.t >= to) continue;
    if (s.outcome === 'rejected') rejected++;
    if (s.latency > deadline) late++;
    else if (s.outcome === 'ok' && !s.fallback) good++;
    else if (s.fallback) fallback++;
    else failed++;
    latencies.push(s.latency);
    waited += s.latency;
  }
  let reached = 0;
  for (const a of arrivals) if (a >= from && a < to) reached++;
  return {
    calls: latencies.length,
    good,
    fallback,
    failed,
    late,
    rejected,
    waited,
    median: percentile(latencies, 0.5),
    p99: p99(latencies),
    max: percentile(latencies, 1),
    reached,
  };
}

/** Column widths of the per-second lines. */
const COLUMNS = /** @type {const} */ ([
  ['t', 5],
  ['phase', 11],
  ['breaker', 11],
  ['good', 5],
  ['fallback', 9],
  ['failed', 7],
  ['late', 5],
  ['refused', 8],
  ['p99 ms', 8],
  ['reached', 8],
]);

/**
 * The header of the per-second lines.
 * @returns {string}
 */
export function secondHeader() {
  return COLUMNS.map(([label, width], i) => align(label, width, i)).join(' ');
}

/**
 * One per-second line.
 * @param {object} line
 * @param {number} line.second The second that ended (1 for [0 s, 1 s)).
 * @param {string} line.phase The dependency's phase during that second.
 * @param {string} line.state The breaker's state at the end of that second.
 * @param {Totals} line.totals Totals of that second.
 * @param {readonly Transition[]} [line.transitions] Breaker state changes during that second.
 * @returns {string}
 */
export function formatSecond({ second, phase, state, totals: t, transitions = [] }) {
  const cells = [
    `${second}s`,
    phase,
    state,
    String(t.good),
    String(t.fallback),
    String(t.failed),
    String(t.late),
    String(t.rejected),
    formatMs(t.p99),
    String(t.reached),
  ];
  const text = cells.map((cell, i) => align(cell, COLUMNS[i][1], i)).join(' ');
  if (transitions.length === 0) return text;
  return `${text}  ${transitions.map((tr) => `${tr.from}->${tr.to}`).join(', ')}`;
}

/**
 * Phase and breaker state are text, left-aligned; the rest are right-aligned.
 * @param {string} text
 * @param {number} width
 * @param {number} column
 */
function align(text, width, column) {
  return column === 1 || column === 2 ? text.padEnd(width) : text.padStart(width);
}

/**
 * One run's figures for the summary: its totals and the peak load it put on its dependency.
 * @typedef {Totals & { peakInFlight: number }} RunFigures
 */

/**
 * The summary of a protected and an unprotected run: two sentences on what callers got, how
 * long they waited and what the dependency bore, then the table they come from.
 * @param {object} summary
 * @param {number} summary.deadline How long a caller waits for an answer, in ms.
 * @param {RunFigures} summary.guarded The protected run.
 * @param {RunFigures} summary.plain The unprotected run.
 * @returns {string[]}
 */
export function formatSummary({ deadline, guarded, plain }) {
  const within = `within ${deadline} ms`;
  /** @type {[string, (t: RunFigures) => string][]} */
  const rows = [
    ['calls', (t) => String(t.calls)],
    [`good (answered ${within})`, (t) => String(t.good)],
    ['fallback served', (t) => String(t.fallback)],
    ['failed (an error in time)', (t) => String(t.failed)],
    [`too late (after ${deadline} ms)`, (t) => String(t.late)],
    ['waited in all, s', (t) => formatSeconds(t.waited)],
    ['waited, median ms', (t) => formatMs(t.median)],
    ['waited, p99 ms', (t) => formatMs(t.p99)],
    ['refused without calling', (t) => String(t.rejected)],
    ['requests to the dependency', (t) => String(t.reached)],
    ['  in flight there, peak', (t) => String(t.peakInFlight)],
  ];
  const label = Math.max(...rows.map(([name]) => name.length)) + 2;
  const col = 12;
  const answered = guarded.good + guarded.fallback;
  return [
    `Answered ${within} (the caller's deadline): protected ${answered} of ${guarded.calls}` +
      ` (${guarded.good} by the dependency, ${guarded.fallback} by the fallback),` +
      ` unprotected ${plain.good} of ${plain.calls}.`,
    `Callers waited ${formatSeconds(guarded.waited)} s in all with protection,` +
      ` ${formatSeconds(plain.waited)} s without; the dependency got ${guarded.reached}` +
      ` requests, at most ${guarded.peakInFlight} at once, against ${plain.reached},` +
      ` at most ${plain.peakInFlight}.`,
    '',
    `${''.padEnd(label)}${'protected'.padStart(col)}${'unprotected'.padStart(col)}`,
    ...rows.map(
      ([name, cell]) =>
        `${name.padEnd(label)}${cell(guarded).padStart(col)}${cell(plain).padStart(col)}`,
    ),
  ];
}

/**
 * A duration in ms shown in seconds with one decimal.
 * @param {number} ms
 * @returns {string}
 */
export function formatSeconds(ms) {
  return (ms / 1000).toFixed(1);
}

/**
 * A latency for display: whole ms from 10 up, one decimal below, `-` for none.
 * @param {number} ms
 * @returns {string}
 */
export function formatMs(ms) {
  if (Number.isNaN(ms)) return '-';
  const tenths = Math.round(ms * 10) / 10;
  return tenths >= 10 ? String(Math.round(ms)) : tenths.toFixed(1);
}
