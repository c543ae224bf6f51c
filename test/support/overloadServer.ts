/**
 * A real HTTP dependency on loopback whose latency grows with its in-flight work: a fixed pool
 * of `workers` behind a FIFO queue. Each request waits for a worker, holds it for its service
 * time, then gets a 200; with `maxQueue`, a request that finds `workers + maxQueue` others
 * already there gets a 503 at once. It counts what it saw, and reports its in-flight work
 * for every `sampleEveryMs`: the mean over the period and the most at once.
 *
 * @example
 * ```ts
 * const server = await startOverloadServer({ workers: 8, serviceMs: 40 });
 * await fetch(server.url); // answered after about 40 ms while fewer than 8 others are in flight
 * server.stats(); // { received: 1, served: 1, maxInFlight: 1, ... }
 * await server.close();
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { seededRandom } from './random.js';

export interface OverloadServerOptions {
  /** Requests served at once (the capacity C), at least 1. */
  readonly workers: number;
  /** Service time of one request in ms: the fixed time, or the mean of the draws. */
  readonly serviceMs: number;
  /**
   * `'exponential'` and `'uniform'` (in [serviceMs / 2, 3 * serviceMs / 2]) draw each request's
   * service time from `random`. @default 'fixed'
   */
  readonly distribution?: 'fixed' | 'exponential' | 'uniform';
  /** Source of the draws, numbers in [0, 1). @default seededRandom(1) */
  readonly random?: () => number;
  /**
   * Requests allowed to wait for a worker; one that finds `workers + maxQueue` requests in
   * flight is answered 503 at once. @default Infinity
   */
  readonly maxQueue?: number;
  /** Period of the in-flight samples, ms. @default 100 */
  readonly sampleEveryMs?: number;
}

/**
 * The in-flight work (requests in service or queued) over one period. A mean rather than a
 * reading at one instant: the sampler's timer often fires in the same turn as the services that
 * end with it, before their clients' next requests can arrive, so an instant would miss them.
 */
export interface InFlightSample {
  /** `performance.now()` at the end of the period. */
  readonly at: number;
  /** The mean over the period. */
  readonly mean: number;
  /** The most at once in the period. */
  readonly max: number;
}

/** What the server counted since it started. */
export interface OverloadServerStats {
  /** Requests that reached it. */
  readonly received: number;
  /** Requests in service or queued now. */
  readonly inFlight: number;
  /** The most requests in service or queued at once. */
  readonly maxInFlight: number;
  /** Requests holding a worker now (at most `workers`). */
  readonly inService: number;
  /** The most requests holding a worker at once. */
  readonly maxInService: number;
  /** Requests waiting for a worker now. */
  readonly queued: number;
  /** Requests answered 200. */
  readonly served: number;
  /** Requests answered 503 at once because the queue was full. */
  readonly rejected: number;
  /**
   * Requests whose client went away first: taken out of the queue, or, in service, left to
   * hold their worker to the end of their service time (work once started is not undone).
   */
  readonly abandoned: number;
  /** The in-flight work of every `sampleEveryMs` since the start. */
  readonly samples: readonly InFlightSample[];
}

export interface OverloadServer {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly port: number;
  readonly workers: number;
  /** Answers per second it gives at most on average: `workers * 1000 / serviceMs`. */
  readonly capacityPerSecond: number;
  /** A copy of its figures now. */
  stats(): OverloadServerStats;
  /**
   * Stops it: the sampler and every service timer are cleared and open connections (queued
   * and in-service requests too) are dropped. Resolves once the listening socket is closed;
   * a second call gets the same promise.
   */
  close(): Promise<void>;
}

/** One request at the server. */
interface Job {
  readonly res: ServerResponse;
  state: 'queued' | 'serving' | 'answered' | 'gone';
  timer: NodeJS.Timeout | undefined;
}

/** Throws a RangeError naming `name` unless `value` is in [min, max] (and whole, or Infinity). */
function check(name: string, value: number, min: number, max: number, whole: boolean): void {
  const ok = value >= min && value <= max && (!whole || Number.isInteger(value) || value === max);
  if (!ok)
    throw new RangeError(`${name} must be in [${min}, ${max}]${whole ? ', whole' : ''}: ${value}`);
}

/** The service time of each request in turn, ms, as `options` describe them. */
export function serviceTimes(
  options: Pick<OverloadServerOptions, 'serviceMs' | 'distribution' | 'random'>,
): () => number {
  const { serviceMs } = options;
  const { distribution = 'fixed' } = options;
  if (distribution === 'fixed') return () => serviceMs;
  const random = options.random ?? seededRandom(1);
  if (distribution === 'uniform') return () => serviceMs * (0.5 + random());
  return () => -serviceMs * Math.log(1 - random());
}

/** Starts a server on a free loopback port. */
export async function startOverloadServer(options: OverloadServerOptions): Promise<OverloadServer> {
  const { workers, serviceMs } = options;
  const maxQueue = options.maxQueue ?? Number.POSITIVE_INFINITY;
  const sampleEveryMs = options.sampleEveryMs ?? 100;
  check('workers', workers, 1, 100_000, true);
  check('serviceMs', serviceMs, 0, 60_000, false);
  check('maxQueue', maxQueue, 0, Number.POSITIVE_INFINITY, true);
  check('sampleEveryMs', sampleEveryMs, 1, 60_000, false);
  const draw = serviceTimes(options);

  const waiting: Job[] = [];
  let head = 0;
  const serving = new Set<Job>();
  const samples: InFlightSample[] = [];
  let received = 0;
  let queued = 0;
  let maxInFlight = 0;
  let maxInService = 0;
  let served = 0;
  let rejected = 0;
  let abandoned = 0;
  let closed = false;
  let closing: Promise<void> | undefined;
  // The period being sampled: the area under the in-flight count since it began, and its peak.
  let periodStart = performance.now();
  let since = periodStart;
  let area = 0;
  let periodMax = 0;

  const inFlight = () => serving.size + queued;
  /** Adds the in-flight work up to now to the period's area; called just before it changes. */
  const note = (): void => {
    const now = performance.now();
    area += inFlight() * (now - since);
    since = now;
  };

  const serve = (job: Job): void => {
    job.state = 'serving';
    serving.add(job);
    maxInService = Math.max(maxInService, serving.size);
    job.timer = setTimeout(() => {
      note();
      serving.delete(job);
      job.timer = undefined;
      if (job.state === 'serving') {
        job.state = 'answered';
        served++;
        job.res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      }
      next();
    }, draw());
  };

  /** Gives free workers to the oldest requests still waiting. */
  const next = (): void => {
    while (!closed && serving.size < workers && head < waiting.length) {
      const job = waiting[head++]!;
      if (head > 1024 && head * 2 > waiting.length) {
        waiting.splice(0, head);
        head = 0;
      }
      if (job.state !== 'queued') continue;
      queued--;
      serve(job);
    }
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    received++;
    req.resume();
    if (inFlight() >= workers + maxQueue) {
      rejected++;
      res.writeHead(503, { 'content-type': 'text/plain', 'content-length': '4' }).end('busy');
      return;
    }
    const job: Job = { res, state: 'queued', timer: undefined };
    // 'close' also follows a finished answer; only an earlier one means the client left.
    res.once('close', () => {
      if (job.state === 'queued') {
        note();
        job.state = 'gone';
        queued--;
        abandoned++;
      } else if (job.state === 'serving') {
        job.state = 'gone';
        abandoned++;
      }
    });
    note();
    queued++;
    waiting.push(job);
    maxInFlight = Math.max(maxInFlight, inFlight());
    periodMax = Math.max(periodMax, inFlight());
    next();
  };

  const server = createServer({ keepAliveTimeout: 60_000 }, onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sampler = setInterval(() => {
    note();
    samples.push({ at: since, mean: area / (since - periodStart), max: periodMax });
    periodStart = since;
    area = 0;
    periodMax = inFlight();
  }, sampleEveryMs);
  sampler.unref();
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    workers,
    capacityPerSecond: serviceMs === 0 ? Infinity : (workers * 1000) / serviceMs,
    stats: () => ({
      received,
      inFlight: inFlight(),
      maxInFlight,
      inService: serving.size,
      maxInService,
      queued,
      served,
      rejected,
      abandoned,
      samples: samples.slice(),
    }),
    close: () => {
      if (closing !== undefined) return closing;
      closed = true;
      clearInterval(sampler);
      for (const job of serving) clearTimeout(job.timer);
      closing = new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
