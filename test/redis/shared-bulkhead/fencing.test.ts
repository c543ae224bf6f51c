/**
 * The fencing check a store can apply, on a recorded history of writes against a real Redis
 * server with faults: a holder paused past its lease (its bulkhead's timers never run), a
 * FLUSHALL and a server restart, while callers of three bulkheads contend for 4 permits.
 *
 * Each write is judged against Redis itself just before the store applies it (one script on
 * a connection of its own, so judgement and writes keep one order): live when Redis still
 * holds the permit's lease; superseded when a newer permit of the same slot already wrote.
 * The per-slot check (the documented one) must accept every live write and refuse every
 * superseded one; the figures of the check on tokens alone are printed beside it.
 */
import { describe, expect, it } from 'vitest';
import type { RedisBulkhead, RedisPermit } from '../../../src/redis/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { sleep } from '../../support/async.js';
import { bulkheadsForEachTest, until } from '../../support/redis-bulkhead.js';
import { ioredisFactory } from '../../support/redis-clients.js';
import { describeRedis } from '../../support/redis-server.js';

const LIVE_SCRIPT = `local t = redis.call('TIME')
local now = math.floor((tonumber(t[1]) * 1000000 + tonumber(t[2])) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) > now then return 1 end
return 0`;

/** A check's verdicts on the history. */
class Tally {
  liveAccepted = 0;
  liveRefused = 0;
  supersededAccepted = 0;
  supersededRefused = 0;
  /** Lease gone, but no newer permit of its slot wrote yet. */
  unsupersededAccepted = 0;
  unsupersededRefused = 0;

  count(live: boolean, superseded: boolean, accepted: boolean): void {
    if (live) accepted ? this.liveAccepted++ : this.liveRefused++;
    else if (superseded) accepted ? this.supersededAccepted++ : this.supersededRefused++;
    else accepted ? this.unsupersededAccepted++ : this.unsupersededRefused++;
  }
}

/** The store: both checks side by side, and what the history says of each write. */
class FencedStore {
  /** The check on tokens alone: refuse a token below the highest seen. */
  private highest = 0;
  /** The per-slot check: refuse a token below the highest seen for its slot. */
  private readonly highestBySlot = new Map<number, number>();
  /** Ground truth: the highest token of each slot that wrote (accepted or not). */
  private readonly wroteBySlot = new Map<number, number>();
  readonly byToken = new Tally();
  readonly bySlot = new Tally();
  writes = 0;

  /** True once a permit of `slot` newer than `token` wrote. */
  supersedes(slot: number, token: number): boolean {
    return (this.wroteBySlot.get(slot) ?? 0) > token;
  }

  write(token: number, slot: number, live: boolean): void {
    this.writes++;
    const superseded = (this.wroteBySlot.get(slot) ?? 0) > token;
    this.wroteBySlot.set(slot, Math.max(token, this.wroteBySlot.get(slot) ?? 0));
    const tokenOk = token >= this.highest;
    if (tokenOk) this.highest = token;
    this.byToken.count(live, superseded, tokenOk);
    const slotOk = token >= (this.highestBySlot.get(slot) ?? 0);
    if (slotOk) this.highestBySlot.set(slot, token);
    this.bySlot.count(live, superseded, slotOk);
  }
}

describeRedis('RedisBulkhead fencing', (redis) => {
  describe('with ioredis', () => {
    const { bulkhead } = bulkheadsForEachTest(redis, ioredisFactory, 'fence');

    it('a store keeping the highest token per slot refuses every write of a superseded permit and none of a live one, through a paused holder, FLUSHALL and a restart', async () => {
      const checker = await ioredisFactory.connect(redis().port);
      const judge = checker.client as unknown as {
        eval(script: string, n: number, key: string, member: string): Promise<number>;
      };
      const store = new FencedStore();
      const options = {
        maxConcurrent: 4,
        lease: 900,
        timeout: 300,
        maxQueue: 100,
        onStoreFailure: 'closed',
      } as const;
      const live = [0, 1, 2].map(() => bulkhead(options));
      // Its timers never run: no heartbeat, so its leases end under it, as under a SIGSTOP. It
      // never waits in line either (nothing would renew its place): it asks until granted.
      const paused = bulkhead({ ...options, maxQueue: 0, clock: new ManualClock() });

      const write = async (b: RedisBulkhead, permit: RedisPermit) => {
        const member = `${b.instanceId}:${permit.fencingToken}:${permit.slot}`;
        let isLive: number;
        try {
          isLive = await judge.eval(LIVE_SCRIPT, 1, b.keys.permits, member);
        } catch {
          return; // Redis is away: the write is not made.
        }
        store.write(permit.fencingToken!, permit.slot!, isLive === 1);
      };

      let running = true;
      const callers = live.flatMap((b) =>
        [0, 1, 2].map(async () => {
          while (running) {
            try {
              await b.run(async (permit) => {
                await write(b, permit);
                await sleep(2);
                await write(b, permit);
              });
            } catch {
              await sleep(5); // full, or refused while Redis is away
            }
          }
        }),
      );
      const pausedHolder = async () => {
        let permit: RedisPermit | undefined;
        while (permit === undefined) {
          permit = await paused.acquire().catch(async () => {
            await sleep(5); // full, or refused while Redis is away
            return undefined;
          });
        }
        await write(paused, permit);
        // Past its lease, until another permit of its slot wrote.
        await until(() => store.supersedes(permit.slot!, permit.fencingToken!), 30_000);
        await write(paused, permit);
        await write(paused, permit);
        permit.release();
      };

      try {
        await sleep(300);
        await pausedHolder();
        await redis().command('FLUSHALL');
        await sleep(300);
        await pausedHolder();
        await redis().restart();
        await sleep(300);
        await pausedHolder();
      } finally {
        running = false;
        await Promise.all(callers);
        await checker.close();
      }

      const percent = (n: number, of: number) => `${((100 * n) / of).toFixed(1)} %`;
      for (const [name, t] of [
        ['tokens alone', store.byToken],
        ['per slot', store.bySlot],
      ] as const) {
        const liveWrites = t.liveAccepted + t.liveRefused;
        console.log(
          `fencing check on ${name}: ${store.writes} writes; live refused ${t.liveRefused} of ${liveWrites} (${percent(t.liveRefused, liveWrites)}); superseded accepted ${t.supersededAccepted} of ${t.supersededAccepted + t.supersededRefused}; lease gone, not yet superseded: ${t.unsupersededAccepted} accepted, ${t.unsupersededRefused} refused`,
        );
      }
      const t = store.bySlot;
      // The faults made writes whose permit had been superseded.
      expect(t.supersededRefused).toBeGreaterThan(0);
      expect(t.liveAccepted).toBeGreaterThan(50);
      expect(t.liveRefused).toBe(0);
      expect(t.supersededAccepted).toBe(0);
    }, 60_000);
  });
});
