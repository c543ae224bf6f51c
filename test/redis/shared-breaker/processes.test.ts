/**
 * Shared breaker signals across 10 real processes (half on ioredis, half on node-redis) and a
 * real Redis server, with the BUILT package (`npm test` builds before Vitest runs): the quorum
 * (with the processes' clocks skewed by ±5 s too), and one probe per lease under load.
 * Times are compared on the processes' own wall clock, which they share (one machine).
 */
import { expect, it } from 'vitest';
import type { TalkingChild } from '../../support/child.js';
import { describeRedis } from '../../support/redis-server.js';
import {
  ask,
  type FixtureOptions,
  isReady,
  opened,
  READY_LIMIT_MS,
  sharedBreakerProcesses,
} from '../../support/shared-breaker.js';

const spawn = sharedBreakerProcesses();

/** `n` processes of one shared breaker name, half on ioredis, half on node-redis, all ready. */
async function start(
  port: number,
  name: string,
  n: number,
  options: FixtureOptions,
  skew: (i: number) => number = () => 0,
): Promise<TalkingChild[]> {
  const procs = Array.from({ length: n }, (_, i) =>
    spawn(port, name, `p${i}`, i % 2 === 0 ? 'ioredis' : 'node-redis', options, skew(i)),
  );
  await Promise.all(procs.map((c) => c.next(isReady, READY_LIMIT_MS)));
  return procs;
}

/**
 * How soon a shared open must reach the other processes on a quiet machine; on a busy one the
 * bound grows by how late the opening process's and the receiving process's event loops ran.
 */
const PROPAGATION_MS = 150;

async function lags(procs: readonly TalkingChild[]): Promise<number[]> {
  return Promise.all(procs.map((c) => ask(c, 'state', 'state').then((m) => m.maxLagMs as number)));
}

async function states(procs: readonly TalkingChild[]): Promise<unknown[]> {
  return Promise.all(procs.map((c) => ask(c, 'state', 'state').then((m) => m.state)));
}

describeRedis('shared breaker signals across processes', (redis) => {
  it.each([
    ['in step', () => 0],
    ['skewed by ±5 s', (i: number) => (i % 2 === 0 ? 5_000 : -5_000)],
  ])(
    'clocks %s: 10 processes, quorum 3: 1 or 2 reports open no other process, even after a poll; the third opens all, by pub/sub',
    async (_, skew) => {
      // No poll after the start: an opening can only come by pub/sub, and the test runs the
      // poll's script itself where it wants one.
      const name = `quorum-${process.pid}-${Date.now()}`;
      const procs = await start(
        redis().port,
        name,
        10,
        { quorum: 3, breakDuration: 60_000, pollInterval: 600_000 },
        skew,
      );
      for (const i of [0, 1]) await ask(procs[i]!, 'fail', 'reported');
      // Neither pub/sub nor the poll opens anyone on two reports.
      const polled = await Promise.all(procs.map((c) => ask(c, 'sync', 'synced')));
      expect(polled.map((m) => m.state)).toEqual([
        'open',
        'open',
        ...Array.from({ length: 8 }, () => 'closed'),
      ]);
      const third = await ask(procs[2]!, 'fail', 'reported');
      const openedAt = await Promise.all(
        procs.slice(3).map((c) => c.next(opened, READY_LIMIT_MS).then((m) => m.at as number)),
      );
      const delays = openedAt.map((at) => at - (third.openedAt as number));
      console.log(
        `shared open reached the other 7 processes ${JSON.stringify(delays)} ms after the third process opened`,
      );
      for (const c of procs.slice(3)) {
        const t = c.messages.find(opened)!;
        expect(t.reason).toBe('shared-open');
      }
      const late = await lags(procs);
      delays.forEach((delay, k) => {
        expect(delay).toBeLessThanOrEqual(PROPAGATION_MS + late[2]! + late[k + 3]!);
      });
      expect(new Set(await states(procs))).toEqual(new Set(['open']));
    },
    300_000,
  );

  it('10 processes x 100 concurrent callers, half-open again and again: one probe per lease, never two probes at once', async () => {
    const name = `probe-${process.pid}-${Date.now()}`;
    // Leases end at their outcome; their length only bounds how long a holder may stall
    // between its grant and its probe's end, which each process measures (event-loop lag).
    const probeLease = 10_000;
    const procs = await start(redis().port, name, 10, {
      quorum: 3,
      breakDuration: 300,
      probeLease,
    });
    for (const i of [0, 1, 2]) procs[i]!.send({ cmd: 'trip' });
    await Promise.all(procs.map((c) => c.next(opened, READY_LIMIT_MS)));
    for (const c of procs)
      c.send({ cmd: 'load', ms: 4_000, callers: 100, pauseMs: 10, callMs: 20 });
    const loads = await Promise.all(
      procs.map((c) => c.next((m) => m.type === 'load', READY_LIMIT_MS)),
    );
    const probes = loads
      .flatMap((l, i) =>
        (l.probes as { start: number; end: number; state: string }[]).map((p) => ({ ...p, i })),
      )
      .sort((a, b) => a.start - b.start);
    const maxLag = Math.max(...loads.map((l) => l.maxLagMs as number));
    console.log(
      `${probes.length} probes in 4 s, by processes ${probes.map((p) => p.i).join(',')}; event loops up to ${maxLag.toFixed(0)} ms late`,
    );
    // The guarantee holds while a holder's probe ends within its lease.
    expect(maxLag).toBeLessThan(probeLease);
    expect(probes.length).toBeGreaterThanOrEqual(3);
    for (const p of probes) expect(p.state).toBe('half-open');
    for (let k = 1; k < probes.length; k++) {
      expect(
        probes[k]!.start,
        `probe ${k} starts after probe ${k - 1} ended`,
      ).toBeGreaterThanOrEqual(probes[k - 1]!.end);
    }
    loads.forEach((l, i) => {
      const stats = l.stats as { leasesGranted: number; storeAvailable: boolean };
      const own = probes.filter((p) => p.i === i).length;
      expect(own).toBeLessThanOrEqual(stats.leasesGranted);
      expect(stats.storeAvailable).toBe(true);
      // Its callers were refused while another process held the lease.
      expect(l.refused).toBeGreaterThan(0);
    });
  }, 300_000);
});
