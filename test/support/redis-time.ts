/**
 * A client that runs the GCRA script at a ManualClock's time instead of Redis TIME (the
 * script's ARGV[4], see GCRA_SCRIPT): a real server and a real script, with the time the test
 * sets, so a RedisRateLimiter's decisions can be compared exactly with the in-memory ones.
 * Keys still expire in Redis's real time: give the limiters intervals of seconds or more.
 */
import type { Clock } from '../../src/index.js';
import {
  adaptClient,
  type RedisClientAdapter,
  type RedisClientLike,
} from '../../src/redis/index.js';

export function onClockTime(client: RedisClientLike, clock: Clock): RedisClientAdapter {
  const adapter = adaptClient(client)!;
  const timed = (args: readonly string[]): readonly string[] => {
    const [interval, burst, permits, now, lease] = args as string[];
    if (now !== undefined && now !== '') return args;
    const nowUs = String(Math.round(clock.now() * 1_000));
    const head = [interval!, burst!, permits!, nowUs];
    return lease === undefined ? head : [...head, lease];
  };
  return {
    evalsha: (sha, keys, args) => adapter.evalsha(sha, keys, timed(args)),
    eval: (script, keys, args) => adapter.eval(script, keys, timed(args)),
    scriptLoad: (script) => adapter.scriptLoad(script),
  };
}
