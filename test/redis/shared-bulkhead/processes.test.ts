/**
 * A RedisBulkhead shared by real separate processes (the BUILT package; `npm test` builds
 * first), calling a loopback HTTP server that counts its own requests in flight: never more
 * than the shared limit at once, fencing tokens unique and increasing (with the processes'
 * clocks in step, and skewed by ±5 s: leases are timed by Redis TIME alone), and the permits of
 * a process killed while holding them back within one lease.
 *
 * Every bulkhead here has a script timeout of a third of its lease (the longest allowed) and
 * leases long enough that a stalled machine cannot make a reply late: a late reply sends the
 * call to `onStoreFailure`, which admits it locally, by design without a fencing token (that,
 * with the default 200 ms timeout, was what a busy machine once showed here as a token that
 * was not a number).
 */

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBulkhead, type RedisPermit } from '../../../src/redis/index.js';
import { runNodeScript } from '../../support/child.js';
import { startCountingServer } from '../../support/counting-server.js';
import { ioredisFactory } from '../../support/redis-clients.js';
import { describeRedis, exited } from '../../support/redis-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/bulkhead-caller.mjs', import.meta.url));

interface Report {
  tokens: number[];
  calls: number;
  lost: number;
  stats: { admitted: number; fallbackAdmissions: number; storeAvailable: boolean };
}

/**
 * Starts the fixture holding `max` permits of `name`; `lines.next()` resolves with each JSON
 * line it prints (an unhandled rejection line fails the test).
 */
function spawnHolder(name: string, max: number, lease: number) {
  const args = [redisPort, httpPort, name, max, 'hold', 0, 0, lease].map(String);
  const child = spawn(process.execPath, [fixture, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const queue: Record<string, unknown>[] = [];
  const waiters: ((line: Record<string, unknown>) => void)[] = [];
  const failures: ((error: Error) => void)[] = [];
  let out = '';
  child.stdout!.on('data', (chunk) => {
    out += chunk;
    for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
      const line = JSON.parse(out.slice(0, nl)) as Record<string, unknown>;
      out = out.slice(nl + 1);
      if (line.unhandled !== undefined) {
        for (const fail of failures.splice(0)) fail(new Error(`unhandled: ${line.unhandled}`));
        continue;
      }
      const waiter = waiters.shift();
      failures.shift();
      if (waiter !== undefined) waiter(line);
      else queue.push(line);
    }
  });
  child.once('exit', (code) => {
    for (const fail of failures.splice(0)) fail(new Error(`the holder exited with ${code}`));
  });
  const lines = {
    next: () =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const line = queue.shift();
        if (line !== undefined) {
          resolve(line);
          return;
        }
        waiters.push(resolve);
        failures.push(reject);
      }),
  };
  return { child, lines };
}

let redisPort = 0;
let http: Awaited<ReturnType<typeof startCountingServer>>;
let httpPort = 0;

beforeAll(async () => {
  if (!existsSync(`${root}dist/redis/index.js`)) {
    throw new Error('The package is not built (missing dist/redis/index.js): run npm run build');
  }
  http = await startCountingServer();
  httpPort = http.port;
});

afterAll(async () => {
  await http.close();
});

describeRedis('RedisBulkhead across processes', (redis) => {
  beforeAll(() => {
    redisPort = redis().port;
  });

  it.each([
    ['in step', () => 0],
    ['skewed by ±5 s', (i: number) => (i % 2 === 0 ? 5_000 : -5_000)],
  ])(
    'clocks %s: 4 processes x 10 callers, a shared limit of 20, the server stalled 400 ms: never more than 20 requests in flight at the server, every permit from Redis, fencing tokens unique and increasing in each process',
    async (clocks, skew) => {
      const name = `procs-${process.pid}-${clocks === 'in step' ? 'step' : 'skewed'}`;
      http.state.maxInFlight = 0;
      http.state.requests = 0;
      const startAt = Date.now() + 1_500;
      const endAt = startAt + 3_000;
      const runs = [0, 1, 2, 3].map((i) =>
        runNodeScript(
          fixture,
          [redis().port, httpPort, name, 20, 10, startAt, endAt, 30_000, skew(i), 10_000],
          root,
          30_000,
        ),
      );
      // A stalled server mid-run (as on a busy machine): replies come late, never too late.
      await new Promise((r) => setTimeout(r, startAt + 1_000 - Date.now()));
      redis().pause();
      await new Promise((r) => setTimeout(r, 400));
      redis().resume();
      const exits = await Promise.all(runs);
      for (const exit of exits) {
        expect(exit.code, exit.stderr).toBe(0);
      }
      const reports = exits.map((exit) => JSON.parse(exit.stdout) as Report);
      // Redis answered every call: every permit came from it, with a fencing token.
      for (const r of reports) {
        expect(r.stats).toMatchObject({ fallbackAdmissions: 0, storeAvailable: true });
        expect(r.tokens.every((t) => typeof t === 'number')).toBe(true);
      }
      const tokens = reports.flatMap((r) => r.tokens);
      const calls = reports.reduce((n, r) => n + r.calls, 0);
      console.log(
        `bulkhead across 4 processes: ${calls} calls, max in flight at the server ${http.state.maxInFlight} (limit 20)`,
      );
      expect(http.state.maxInFlight).toBeLessThanOrEqual(20);
      // The limit was contended: 40 callers for 20 permits.
      expect(http.state.maxInFlight).toBeGreaterThanOrEqual(10);
      expect(calls).toBe(http.state.requests);
      expect(new Set(tokens).size).toBe(tokens.length);
      for (const r of reports) {
        for (let i = 1; i < r.tokens.length; i++)
          expect(r.tokens[i]).toBeGreaterThan(r.tokens[i - 1]!);
        expect(r.lost).toBe(0);
      }
    },
    60_000,
  );

  it('a process stopped (SIGSTOP) for longer than its lease loses its permits to others, and on SIGCONT reports each loss as an event, with no error', async () => {
    const lease = 6_000;
    const name = `stopped-${process.pid}`;
    const { child: holder, lines } = spawnHolder(name, 5, lease);
    const held = (await lines.next()).held as number[];
    expect(held).toHaveLength(5);
    const connected = await ioredisFactory.connect(redis().port);
    const bulkhead = new RedisBulkhead({
      client: connected.client,
      name,
      maxConcurrent: 5,
      lease,
      maxQueue: 5,
      timeout: lease / 3,
      onWarning: () => {},
    });
    try {
      holder.kill('SIGSTOP');
      // Its leases end within one lease; the waiting calls take the permits.
      const permits = await Promise.all(Array.from({ length: 5 }, () => bulkhead.acquire()));
      expect(permits.every((p) => !p.local && p.fencingToken! > Math.max(...held))).toBe(true);
      holder.kill('SIGCONT');
      const lost: { fencingToken: number }[] = [];
      for (let i = 0; i < 5; i++) lost.push((await lines.next()).lost as { fencingToken: number });
      expect(lost.map((e) => e.fencingToken).sort()).toEqual([...held].sort());
      // Still alive: the loss is an event, not a crash.
      expect(holder.exitCode).toBe(null);
      await Promise.all(permits.map((p) => p.release()));
    } finally {
      holder.kill('SIGCONT');
      holder.kill('SIGKILL');
      bulkhead.dispose();
      await connected.close();
    }
  }, 60_000);

  it('a process killed (SIGKILL) while holding all 20 permits gives them back within one lease', async () => {
    const lease = 6_000;
    const name = `killed-${process.pid}`;
    const { child: hog, lines } = spawnHolder(name, 20, lease);
    const held = (await lines.next()).held as number[];
    expect(held).toHaveLength(20);
    const connected = await ioredisFactory.connect(redis().port);
    const bulkhead = new RedisBulkhead({
      client: connected.client,
      name,
      maxConcurrent: 20,
      lease,
      maxQueue: 20,
      timeout: lease / 3,
      onWarning: () => {},
    });
    try {
      const waiting = Array.from({ length: 20 }, () => bulkhead.acquire());
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      const killedAt = performance.now();
      const [s, us] = (await redis().command('TIME')) as [string, string];
      const killedAtServer = Number(s) * 1_000 + Math.floor(Number(us) / 1_000);
      hog.kill('SIGKILL');
      await exited(hog);
      // Every lease of the dead process ends within one lease of its death (server clock).
      const scores = (await redis().command(
        'ZRANGE',
        bulkhead.keys.permits,
        '0',
        '-1',
        'WITHSCORES',
      )) as string[];
      const ends = scores.filter((_, i) => i % 2 === 1).map(Number);
      expect(ends).toHaveLength(20);
      for (const end of ends) expect(end).toBeLessThanOrEqual(killedAtServer + lease);
      const permits: RedisPermit[] = await Promise.all(waiting);
      const tookMs = performance.now() - killedAt;
      lag.disable();
      const lateMs = lag.max / 1e6;
      console.log(
        `permits of a killed process back after ${Math.round(tookMs)} ms (lease ${lease} ms)`,
      );
      expect(permits.every((p) => !p.local && p.fencingToken! > Math.max(...held))).toBe(true);
      // Granted when the earliest lease ended (<= one lease), plus a poll's round trip, plus
      // however late this process's event loop ran meanwhile (a stalled machine).
      expect(tookMs).toBeLessThan(lease * 1.5 + lateMs);
      await Promise.all(permits.map((p) => p.release()));
    } finally {
      hog.kill('SIGKILL');
      bulkhead.dispose();
      await connected.close();
    }
  }, 60_000);
});
