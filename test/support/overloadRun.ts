/**
 * Drives closed-loop clients through a breakwater pipeline (or none) against an
 * {@link startOverloadServer} dependency on loopback for a while of real time, and reports what
 * the callers got (goodput, latency of admitted calls, refusals) beside what the server saw.
 *
 * @example
 * ```ts
 * const server = { workers: 8, serviceMs: 40 };
 * const unloaded = await overloadRun({ server, clients: 1, durationMs: 3_000 });
 * const run = await overloadRun({
 *   server,
 *   clients: 32,
 *   warmupMs: 500,
 *   durationMs: 3_000,
 *   via: pipeline(bulkhead({ maxConcurrent: 8 })),
 * });
 * run.p99 / unloaded.p99; // about 1
 * ```
 */
import { Agent, request } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { ChartPoint } from '../../scripts/chart-adaptive.mjs';
import { type ExecuteOptions, type ExecutionContext, isPolicyRejection } from '../../src/index.js';
import { sleep } from './async.js';
import { type OverloadServerOptions, startOverloadServer } from './overloadServer.js';
import { percentile, type Runner } from './queueing.js';

export interface OverloadRunOptions {
  /** The dependency: the run starts its own server and closes it at the end. */
  readonly server: OverloadServerOptions;
  /** Closed-loop clients: each calls again as soon as its last call ends. */
  readonly clients: number;
  /** Length of the measured window, ms of real time. */
  readonly durationMs: number;
  /** Time the clients run before the window opens (queues fill), not measured. @default 0 */
  readonly warmupMs?: number;
  /** The pipeline every call goes through; without one the clients call the server directly. */
  readonly via?: Runner;
  /** Options for each call's `execute` (a deadline, a criticality, ...). */
  readonly options?: () => ExecuteOptions | undefined;
  /** An answer counts toward goodput only when it came within this many ms of its call. @default Infinity */
  readonly deadlineMs?: number;
  /**
   * How long a client whose call was refused by a policy waits before its next call. A refusal
   * settles without I/O, so a client that called again at once would keep the event loop to
   * itself. @default 20
   */
  readonly refusalPauseMs?: number;
  /**
   * Read at the end of every second into `series` (`limit`): what the pipeline lets through at
   * once, a constant for a bulkhead, the current limit of an adaptive one.
   */
  readonly limit?: () => number;
}

/** What one run measured. Counts are of the calls that ended in the window. */
export interface OverloadRunResult {
  readonly clients: number;
  /** The measured window, ms (`durationMs`). */
  readonly windowMs: number;
  /** The server's `workers * 1000 / serviceMs`. */
  readonly capacityPerSecond: number;
  /** Calls that ended. */
  readonly calls: number;
  /** Calls answered 200. */
  readonly answered: number;
  /** Answers 200 within `deadlineMs` of their call, per second. */
  readonly goodput: number;
  /** Calls a policy refused before they reached the server. */
  readonly refused: number;
  /** Calls admitted that ended otherwise (a 503, an error, a timeout). */
  readonly failed: number;
  /** Latency (call to settlement, waits in the policies included) of the admitted calls, ms. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /**
   * The longest the event loop of this process (clients and server both) ran late during the
   * run, ms: what a stalled or starved machine added to any one call, for bounds on latency that
   * a busy machine cannot break.
   */
  readonly loopDelayMaxMs: number;
  /** The server's figures. */
  readonly server: {
    /** The most requests in flight at once during the whole run (warm-up included). */
    readonly maxInFlight: number;
    /** The most requests holding a worker at once during the whole run. */
    readonly maxInService: number;
    /** The median of the 100-ms means of its in-flight work in the window. */
    readonly inFlightMedian: number;
    readonly received: number;
    readonly served: number;
    readonly rejected: number;
  };
  /**
   * Every whole second of the run, warm-up included, as scripts/chart-adaptive.mjs draws it:
   * `t` in seconds since the clients started, the `limit` read at its end, the server's mean
   * in-flight work, the p50 and p99 latency of the admitted calls that ended in it (null where
   * there is nothing to report).
   */
  readonly series: ChartPoint[];
}

/** GETs `url` on `agent`'s kept-alive sockets; resolves with the status once the body is read. */
function get(agent: Agent, url: string, signal: AbortSignal | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, signal }, (res) => {
      res.on('error', reject);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.resume();
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs the clients for `warmupMs + durationMs` and measures the last `durationMs`. */
export async function overloadRun(options: OverloadRunOptions): Promise<OverloadRunResult> {
  const { clients, durationMs, via } = options;
  const warmupMs = options.warmupMs ?? 0;
  const deadlineMs = options.deadlineMs ?? Number.POSITIVE_INFINITY;
  const refusalPauseMs = options.refusalPauseMs ?? 20;
  const server = await startOverloadServer(options.server);
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const latencies: number[] = [];
  // Every admitted call of the run, for the series: when it ended and its latency.
  const ends: number[] = [];
  const allLatencies: number[] = [];
  const limits: number[] = [];
  let calls = 0;
  let answered = 0;
  let inTime = 0;
  let refused = 0;
  let failed = 0;

  const began = performance.now();
  const opened = began + warmupMs;
  const closes = opened + durationMs;
  const measured = (end: number) => end >= opened && end < closes;

  const client = async (): Promise<void> => {
    while (performance.now() < closes) {
      const start = performance.now();
      let admitted = false;
      const attempt = (context?: ExecutionContext) => {
        admitted = true;
        return get(agent, server.url, context?.signal);
      };
      let status = 0;
      let error: unknown;
      try {
        status = await (via === undefined ? attempt() : via.execute(attempt, options.options?.()));
      } catch (e) {
        error = e;
      }
      const end = performance.now();
      const wasRefused = !admitted && isPolicyRejection(error);
      if (!wasRefused) {
        ends.push(end);
        allLatencies.push(end - start);
      }
      if (measured(end)) {
        calls++;
        if (wasRefused) refused++;
        else {
          latencies.push(end - start);
          if (error === undefined && status === 200) {
            answered++;
            if (end - start <= deadlineMs) inTime++;
          } else failed++;
        }
      }
      if (wasRefused) await sleep(refusalPauseMs);
    }
  };

  const { limit } = options;
  const reader =
    limit === undefined ? undefined : setInterval(() => limits.push(limit()), 1000).unref();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  try {
    await Promise.all(Array.from({ length: clients }, client));
  } finally {
    loopDelay.disable();
    clearInterval(reader);
    agent.destroy();
    await server.close();
  }
  const stats = server.stats();
  const sampled = stats.samples.filter((s) => s.at > opened && s.at <= closes);
  const seconds = Math.floor((closes - began) / 1000);
  const series = Array.from({ length: seconds }, (_, t): ChartPoint => {
    const from = began + t * 1000;
    const inSecond = (at: number) => at > from && at <= from + 1000;
    const lat = allLatencies.filter((_, k) => inSecond(ends[k]!));
    const means = stats.samples.filter((x) => inSecond(x.at)).map((x) => x.mean);
    const figure = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? null : v);
    return {
      t,
      limit: figure(limits[t]),
      inflight: means.length === 0 ? null : means.reduce((a, b) => a + b, 0) / means.length,
      p50: figure(percentile(lat, 0.5)),
      p99: figure(percentile(lat, 0.99)),
    };
  });
  return {
    clients,
    windowMs: durationMs,
    capacityPerSecond: server.capacityPerSecond,
    calls,
    answered,
    goodput: (inTime * 1000) / durationMs,
    refused,
    failed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.length === 0 ? Number.NaN : Math.max(...latencies),
    // The histogram's values include its own sampling interval, in ns.
    loopDelayMaxMs: Math.max(0, loopDelay.max / 1e6 - 10),
    server: {
      maxInFlight: stats.maxInFlight,
      maxInService: stats.maxInService,
      inFlightMedian: percentile(
        sampled.map((s) => s.mean),
        0.5,
      ),
      received: stats.received,
      served: stats.served,
      rejected: stats.rejected,
    },
    series,
  };
}

/**
 * The baseline: one client calling the idle server for `durationMs`, so no request ever waits
 * for a worker. Its `p99` is the "unloaded p99" the overload runs are measured against.
 */
export function unloadedRun(
  server: OverloadServerOptions,
  durationMs: number,
  deadlineMs?: number,
): Promise<OverloadRunResult> {
  return overloadRun({ server, clients: 1, durationMs, deadlineMs });
}

/** A row of {@link overloadTable}. */
export interface OverloadRow {
  readonly name: string;
  readonly run: OverloadRunResult;
}

/**
 * The runs side by side as a text table, latencies also as multiples of the unloaded p99, and
 * goodput as a share of the server's capacity.
 */
export function overloadTable(unloaded: OverloadRunResult, rows: readonly OverloadRow[]): string {
  const ms = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(1));
  const head = [
    'run',
    'clients',
    'goodput/s',
    '% of capacity',
    'p50 ms',
    'p99 ms',
    'p99 / unloaded',
    'refused/s',
    'server in-flight median',
    'max',
  ];
  const body = [{ name: 'unloaded', run: unloaded }, ...rows].map(({ name, run }) => [
    name,
    String(run.clients),
    run.goodput.toFixed(0),
    `${((100 * run.goodput) / run.capacityPerSecond).toFixed(0)} %`,
    ms(run.p50),
    ms(run.p99),
    `${(run.p99 / unloaded.p99).toFixed(2)} x`,
    ((run.refused * 1000) / run.windowMs).toFixed(0),
    run.server.inFlightMedian.toFixed(1),
    String(run.server.maxInFlight),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [
    line(head),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}
