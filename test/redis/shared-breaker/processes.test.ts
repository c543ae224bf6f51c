/**
 * Shared breaker signals across 10 real processes (half on ioredis, half on node-redis) and a
 * real Redis server, with the BUILT package (`npm test` builds before Vitest runs): the quorum
 * (with the processes' clocks skewed by ±5 s too), and one probe per lease under load.
 * Times are compared on the processes' own wall clock, which they share (one machine).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { sleep } from '../../support/async.js';
import { startTalkingChild, type TalkingChild } from '../../support/child.js';
import { describeRedis } from '../../support/redis-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/shared-breaker.mjs', import.meta.url));

beforeAll(() => {
  if (!existsSync(`${root}dist/redis/index.js`)) {
    throw new Error('The package is not built (missing dist/redis/index.js): run npm run build');
  }
});

type Message = Record<string, unknown>;
let started: TalkingChild[] = [];

afterEach(async () => {
  await Promise.all(started.map((c) => c.end()));
  started = [];
});

function start(
  port: number,
  name: string,
  n: number,
  options: object,
  skew: (i: number) => number = () => 0,
): TalkingChild[] {
  started = Array.from({ length: n }, (_, i) =>
    startTalkingChild(
      fixture,
      [
        port,
        name,
        `p${i}`,
        i % 2 === 0 ? 'ioredis' : 'node-redis',
        skew(i),
        JSON.stringify(options),
      ],
      root,
      60_000,
    ),
  );
  return started;
}

const opened = (m: Message) => m.type === 'transition' && m.to === 'open';

async function states(procs: TalkingChild[]): Promise<unknown[]> {
  return Promise.all(
    procs.map((c) => {
      const seen = c.messages.length;
      c.send({ cmd: 'state' });
      return c
        .next((m) => m.type === 'state' && c.messages.indexOf(m) >= seen)
        .then((m) => m.state);
    }),
  );
}

describeRedis('shared breaker signals across processes', (redis) => {
  it.each([
    ['in step', () => 0],
    ['skewed by ±5 s', (i: number) => (i % 2 === 0 ? 5_000 : -5_000)],
  ])(
    'clocks %s: 10 processes, quorum 3: 1 or 2 reports open no other process; the third opens all, by pub/sub',
    async (_, skew) => {
      const pollInterval = 1_000;
      const name = `quorum-${process.pid}-${Date.now()}`;
      const procs = start(
        redis().port,
        name,
        10,
        { quorum: 3, breakDuration: 20_000, pollInterval },
        skew,
      );
      await Promise.all(procs.map((c) => c.next((m) => m.type === 'ready', 20_000)));
      for (const i of [0, 1]) {
        procs[i]!.send({ cmd: 'fail' });
        await procs[i]!.next((m) => m.type === 'reported');
      }
      // Longer than a poll: neither pub/sub nor the poll opens anyone on two reports.
      await sleep(pollInterval + 300);
      expect(await states(procs)).toEqual([
        'open',
        'open',
        ...Array.from({ length: 8 }, () => 'closed'),
      ]);
      procs[2]!.send({ cmd: 'fail' });
      const third = await procs[2]!.next((m) => m.type === 'reported');
      const openedAt = await Promise.all(
        procs.slice(3).map((c) => c.next(opened, 10_000).then((m) => m.at as number)),
      );
      const delays = openedAt.map((at) => at - (third.openedAt as number));
      console.log(
        `shared open reached the other 7 processes ${JSON.stringify(delays)} ms after the third process opened`,
      );
      // Pub/sub brings it in a few ms (4-14 ms measured), well under a poll: each process acts
      // on its own message, timed on its own wall clock, so neither the test's event loop nor
      // the messages to it count. 150 ms leaves ten times the measured delay to the machine.
      expect(Math.max(...delays)).toBeLessThan(150);
      for (const c of procs.slice(3)) {
        const t = c.messages.find(opened)!;
        expect(t.reason).toBe('shared-open');
      }
      expect(new Set(await states(procs))).toEqual(new Set(['open']));
    },
    60_000,
  );

  it('10 processes x 100 concurrent callers, half-open again and again: one probe per lease, never two probes at once', async () => {
    const name = `probe-${process.pid}-${Date.now()}`;
    const procs = start(redis().port, name, 10, {
      quorum: 3,
      breakDuration: 300,
      probeLease: 2_000,
    });
    await Promise.all(procs.map((c) => c.next((m) => m.type === 'ready', 20_000)));
    for (const i of [0, 1, 2]) procs[i]!.send({ cmd: 'trip' });
    await Promise.all(procs.map((c) => c.next(opened)));
    for (const c of procs)
      c.send({ cmd: 'load', ms: 3_000, callers: 100, pauseMs: 10, callMs: 20 });
    const loads = await Promise.all(procs.map((c) => c.next((m) => m.type === 'load', 30_000)));
    const probes = loads
      .flatMap((l, i) =>
        (l.probes as { start: number; end: number; state: string }[]).map((p) => ({ ...p, i })),
      )
      .sort((a, b) => a.start - b.start);
    console.log(`${probes.length} probes in 3 s, by processes ${probes.map((p) => p.i).join(',')}`);
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
    });
    expect(loads.reduce((n, l) => n + (l.refused as number), 0)).toBeGreaterThan(10_000);
  }, 60_000);
});
