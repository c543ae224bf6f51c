/**
 * The overload run: a dependency whose capacity drops to half the offered load for
 * 10 s, called at a steady rate by a service whose inbound requests each have 1 s to answer
 * (the request context), through the standard preset, and beside it a plain retry and breaker
 * and no protection, in real time.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { protectedFetch, runWithRequestContext } from '../../../src/http/index.js';
import { circuitBreaker, pipeline, retry, timeout } from '../../../src/index.js';
import { openLoop } from '../../support/openLoop.js';
import { startWorkerPoolServer, type WorkerPoolServer } from '../../support/workerPoolServer.js';

const RATE = 200;
const SERVICE_MS = 20;
const WORKERS = 8; // 400 answers/s: twice the load
const DIP_WORKERS = 2; // 100 answers/s: half the load
const BEFORE_MS = 2_000;
const DIP_MS = 10_000;
const AFTER_MS = 3_000;
const DEADLINE_MS = 1_000;
/** How late the event loop may run, ms, for the share answered after the dip to be judged. */
const LATE_MS = 50;

interface RunResult {
  /** Calls made in the dip and answered within their deadline. */
  readonly answered: number;
  /**
   * The answers the dependency could give in the dip: its workers' time over the mean length
   * of its services then, which a late timer stretches (so a stalled machine lowers it).
   */
  readonly possible: number;
  /** Of the calls made from 1 s after the capacity came back, the share answered. */
  readonly after: number;
  readonly received: number;
  /** The longest the event loop ran late from 1 s after the capacity came back, ms. */
  readonly afterLateMs: number;
  /** Why the calls from 1 s after the capacity came back failed: status or error code, counted. */
  readonly afterFailures: Record<string, number>;
}

type Caller = (url: string, signal: AbortSignal) => Promise<Response>;

const servers: WorkerPoolServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function run(caller: Caller): Promise<RunResult> {
  const server = await startWorkerPoolServer({ workers: WORKERS, serviceMs: SERVICE_MS });
  servers.push(server);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const t0 = performance.now();
  const dipAt = t0 + BEFORE_MS;
  const backAt = dipAt + DIP_MS;
  const timers = [
    setTimeout(() => server.setWorkers(DIP_WORKERS), BEFORE_MS),
    setTimeout(() => server.setWorkers(WORKERS), BEFORE_MS + DIP_MS),
    setTimeout(() => loop.enable(), BEFORE_MS + DIP_MS + 1_000),
  ];
  const outcomes: { start: number; end: number; ok: boolean; why: string }[] = [];
  await openLoop(RATE, BEFORE_MS + DIP_MS + AFTER_MS, async (_, start) => {
    const signal = AbortSignal.timeout(DEADLINE_MS);
    let ok = false;
    let why = 'ok';
    try {
      const res = await runWithRequestContext({ timeout: DEADLINE_MS, signal }, () =>
        caller(server.url, signal),
      );
      ok = res.status === 200 && (await res.text()) === 'ok';
      if (!ok) why = String(res.status);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      why = typeof code === 'string' ? code : (error as Error).name;
    }
    outcomes.push({ start, end: performance.now(), ok, why });
  });
  for (const t of timers) clearTimeout(t);
  loop.disable();
  const inDip = server.services.filter((s) => s.start >= dipAt + 100 && s.start < backAt);
  const meanService = inDip.reduce((sum, s) => sum + s.end - s.start, 0) / inDip.length;
  const after = outcomes.filter((o) => o.start >= backAt + 1_000);
  return {
    answered: outcomes.filter(
      (o) => o.start >= dipAt && o.start < backAt && o.ok && o.end - o.start <= DEADLINE_MS,
    ).length,
    possible: (DIP_WORKERS * DIP_MS) / (meanService || SERVICE_MS),
    after: after.filter((o) => o.ok).length / after.length,
    received: server.counts.received,
    afterLateMs: loop.max / 1e6,
    afterFailures: counted(after.filter((o) => !o.ok).map((o) => o.why)),
  };
}

function counted(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const describeRun = (name: string, r: RunResult) =>
  `${name}: ${r.answered} answers in time in the dip of ${r.possible.toFixed(0)} possible (${pct(r.answered / r.possible)}), ${pct(r.after)} answered from 1 s after the capacity came back, ${r.received} requests sent; failures after: ${JSON.stringify(r.afterFailures)}, the event loop up to ${r.afterLateMs.toFixed(0)} ms late then`;

let preset: RunResult | undefined;

describe('protectedFetch under overload', () => {
  it('(b) the standard preset keeps at least 90 % of the possible answers in a capacity dip, and 95 % 1 s after it', async () => {
    const f = protectedFetch();
    preset = await run((url) => f(url));
    f.dispose();
    console.info(`(b) ${describeRun('standard preset', preset)}`);
    expect(preset.answered / preset.possible).toBeGreaterThanOrEqual(0.9);
    // A stalled machine turns the steady calls into bursts (the open loop catches up on the
    // calls its late timer missed), which the concurrency limit refuses in part: 95 % is judged
    // where the event loop kept time, and recovery alone where it did not (a plain retry and
    // breaker answers none then).
    expect(preset.after).toBeGreaterThanOrEqual(preset.afterLateMs <= LATE_MS ? 0.95 : 0.5);
  }, 40_000);

  it('(b) beside it, a plain retry and breaker and no protection keep far fewer', async () => {
    const plain = pipeline(
      retry({ maxAttempts: 3, delay: 300 }),
      circuitBreaker(),
      timeout(10_000),
    );
    const [retried, bare] = await Promise.all([
      run((url) =>
        plain.execute(async ({ signal }) => {
          const res = await fetch(url, { signal });
          if (res.status >= 500) throw new Error(String(res.status));
          return res;
        }),
      ),
      run((url, signal) => fetch(url, { signal })),
    ]);
    console.info(
      `(b) ${describeRun('retry + breaker', retried)}; ${describeRun('no protection', bare)}`,
    );
    for (const r of [retried, bare]) expect(r.answered / r.possible).toBeLessThan(0.9);
  }, 40_000);
});
