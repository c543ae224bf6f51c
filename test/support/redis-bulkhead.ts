/**
 * Redis bulkheads for tests: a maker of bulkheads on the current test's client (disposed after
 * each test), and a wait for what a real server does in its own time (a reply, a pub/sub
 * message), bounded far above what a busy machine needs.
 */
import { afterEach } from 'vitest';
import { RedisBulkhead, type RedisBulkheadOptions } from '../../src/redis/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { sleep } from './async.js';
import { type ClientFactory, clientForEachTest } from './redis-clients.js';
import type { RedisServer } from './redis-server.js';

/** Resolves once `condition()` holds; fails after `limitMs` of real time. */
export async function until(condition: () => boolean, limitMs = 5_000): Promise<void> {
  const end = performance.now() + limitMs;
  while (!condition()) {
    if (performance.now() > end) throw new Error(`condition not met within ${limitMs} ms`);
    await sleep(2);
  }
}

/**
 * `clientForEachTest`, and a maker of bulkheads on that client; every bulkhead of one test
 * shares the name `<prefix>-<client kind>-<n>` unless given one (so two of them are two
 * processes sharing a bulkhead), with warnings silenced. They are disposed after each test.
 */
export function bulkheadsForEachTest(
  redis: () => RedisServer,
  factory: ClientFactory,
  prefix: string,
) {
  const client = clientForEachTest(redis, factory);
  let run = 0;
  let name = '';
  const made: RedisBulkhead[] = [];
  afterEach(() => {
    for (const b of made.splice(0)) b.dispose();
    name = '';
  });
  const bulkhead = (options: Omit<RedisBulkheadOptions, 'client'> = {}) => {
    if (name === '') name = `${prefix}-${factory.kind}-${++run}`;
    const b = new RedisBulkhead({ client: client(), name, onWarning: () => {}, ...options });
    made.push(b);
    return b;
  };
  return { client, bulkhead, name: () => name };
}

/**
 * A clock whose timers are a ManualClock's and whose `now` runs `paused` ms ahead of them: the
 * time a process reads after a pause in which none of its timers could fire.
 */
export function pausedClock() {
  const manual = new ManualClock();
  const state = {
    manual,
    paused: 0,
    clock: {
      now: () => manual.now() + state.paused,
      setTimer: (callback: () => void, ms: number) => manual.setTimer(callback, ms),
      clearTimer: (handle: unknown) => manual.clearTimer(handle),
    },
  };
  return state;
}
