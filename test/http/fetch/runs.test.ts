/**
 * The runs against real dependencies on loopback, in real time. Counts are taken at
 * the server; the few time bounds are loose enough for a stalled 2-core machine.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ProtectedFetch,
  protectedFetch,
  runWithRequestContext,
} from '../../../src/http/index.js';
import { isTimeoutError } from '../../../src/index.js';
import { openLoop } from '../../support/openLoop.js';
import {
  type Script,
  type ScriptedServer,
  startScriptedServer,
} from '../../support/scriptedServer.js';

const servers: ScriptedServer[] = [];
const fetches: ProtectedFetch[] = [];
async function serve(script: Script): Promise<ScriptedServer> {
  const s = await startScriptedServer(script);
  servers.push(s);
  return s;
}
function made(f: ProtectedFetch): ProtectedFetch {
  fetches.push(f);
  return f;
}
afterEach(async () => {
  for (const f of fetches.splice(0)) f.dispose();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('protectedFetch against a dependency that fails', () => {
  it('(a) sends at most 1.1 x the calls over 5 s of failures at 200 calls/s, and each POST at most once', async () => {
    const server = await serve(() => ({ status: 500 }));
    const f = made(protectedFetch());
    // The first call is a POST while the breaker is still closed: it reaches the server, once.
    await f(`${server.url}post/first`, { method: 'POST', body: 'order' });
    const results = await openLoop(200, 5_000, (i) =>
      i % 10 === 0
        ? f(`${server.url}post/${i}`, { method: 'POST', body: 'order' })
        : f(`${server.url}get/${i}`),
    );
    const calls = results.length + 1;
    const sent = server.requests.length;
    const posts = server.requests.filter((r) => r.method === 'POST').map((r) => r.path);
    console.info(
      `(a) ${calls} calls, ${sent} requests reached the dependency (${((100 * sent) / calls).toFixed(1)} %), ${posts.length} POSTs`,
    );
    expect(sent).toBeLessThanOrEqual(1.1 * calls);
    expect(posts.filter((p) => p === '/post/first')).toHaveLength(1);
    expect(new Set(posts).size).toBe(posts.length);
  }, 30_000);

  it('(c) lets at most 2 % of the calls reach a dependency that answers 503 to everything, after the first 100 ms', async () => {
    const server = await serve(() => ({ status: 503 }));
    // When each request left, taken as the preset hands it to fetch: the server's own clock
    // reads its arrival only when this process's event loop runs the handler.
    const sentAt: number[] = [];
    const f = made(
      protectedFetch({
        fetch: (input, init) => {
          sentAt.push(performance.now());
          return fetch(input, init);
        },
      }),
    );
    // The first 100 ms are counted in the event loop's time: ten turns of a 10 ms interval from
    // the first call. On a stalled machine the failures that open the breaker come back as late
    // as the loop runs, and the interval's turns are as late.
    let first = Number.POSITIVE_INFINITY;
    let turns = 0;
    let graceEnd = Number.POSITIVE_INFINITY;
    let ticker: NodeJS.Timeout | undefined;
    const results = await openLoop(200, 3_000, (_, at) => {
      if (ticker === undefined) {
        first = at;
        ticker = setInterval(() => {
          if (++turns < 10) return;
          graceEnd = performance.now();
          clearInterval(ticker);
        }, 10);
      }
      return f(server.url);
    });
    clearInterval(ticker);
    const late = sentAt.filter((t) => t > graceEnd).length;
    console.info(
      `(c) ${results.length} calls, ${server.requests.length} requests, ${late} sent after the first 100 ms of the event loop (${(graceEnd - first).toFixed(0)} ms of wall time; ${((100 * late) / results.length).toFixed(2)} %)`,
    );
    expect(sentAt).toHaveLength(server.requests.length);
    expect(late).toBeLessThanOrEqual(0.02 * results.length);
  }, 30_000);
});

describe('protectedFetch and connections', () => {
  it('(d) leaves no socket behind after 1,000 failed attempts and hedge losers', async () => {
    // Per call: its first attempt is a 503 whose body drips for 2 s (a failed attempt), its
    // second answers only after 2 s (a hedge loser), its third answers at once (the winner).
    const seen = new Map<string, number>();
    const server = await serve((r) => {
      const n = seen.get(r.path) ?? 0;
      seen.set(r.path, n + 1);
      if (n === 0) return { status: 503, body: 200 };
      if (n === 1) return { status: 200, delayMs: 2_000, body: 'late' };
      return { status: 200, body: 'won' };
    });
    const f = made(
      protectedFetch({
        hedge: { delay: 20, maxHedges: 2 },
        budget: { ratio: 1000, minRetriesPerSecond: 1000 },
        breaker: false,
        limit: false,
      }),
    );
    const callsAtOnce = 10;
    let next = 0;
    const worker = async () => {
      while (next < 500) {
        const res = await f(`${server.url}call/${next++}`);
        expect(await res.text()).toBe('won');
      }
    };
    await Promise.all(Array.from({ length: callsAtOnce }, worker));
    expect(server.requests).toHaveLength(1_500);
    // Every failed attempt and loser was dropped by the client long before its answer ended.
    await expect
      .poll(() => server.requests.filter((r) => r.aborted).length, { timeout: 5_000 })
      .toBe(1_000);
    // What stays open is the pool's idle connections, about as many as requests were ever in
    // flight at once (3 per call, and those closing), not a number growing with the attempts.
    await expect
      .poll(() => server.openSockets(), { timeout: 5_000 })
      .toBeLessThanOrEqual(10 * callsAtOnce);
    console.info(
      `(d) 1000 failed attempts and losers, all aborted by the client; ${server.openSockets()} sockets open at the server after`,
    );
  }, 30_000);
});

describe('protectedFetch within a request context', () => {
  it('(e) sends a deadline below 300 ms downstream and aborts the request when it passes', async () => {
    const server = await serve(() => 'hang');
    const f = made(protectedFetch());
    const started = performance.now();
    const error = await runWithRequestContext({ timeout: 300 }, () => f(server.url)).catch(
      (e: unknown) => e,
    );
    const ended = performance.now() - started;
    expect(isTimeoutError(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
    const sent = Number(server.requests[0]!.headers['x-timeout-ms']);
    expect(sent).toBeLessThan(300);
    expect(sent).toBeGreaterThan(0);
    await expect.poll(() => server.requests[0]!.aborted).toBe(true);
    console.info(
      `(e) deadline header ${sent} ms; the call failed after ${ended.toFixed(0)} ms and the server saw the request aborted`,
    );
    expect(ended).toBeGreaterThanOrEqual(299);
  });
});
