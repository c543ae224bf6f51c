/**
 * The README's Redis example, as a user would take it: compiled by TypeScript under `nodenext`
 * against the BUILT package and ioredis, then run against a real Redis server. Its first
 * decision must be made by Redis (not by the fallback of a client not yet ready), and the
 * client options it recommends must reconnect soon after Redis is back.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CompiledExample,
  compileReadmeExample,
  removeExample,
  runExample,
} from '../support/readme-example.js';
import { describeRedis } from '../support/redis-server.js';

const HEADING = 'Rate limits across processes (Redis)';
/** The sequel of the example: the limiter as a policy, in a pipeline and a registry. */
const POLICY_HEADING = 'A Redis rate limiter as a policy';

/** The names the example uses without defining them: a request's user and a logger. */
const PRELUDE = `const userId = 'user-1';
const log = { warn: (..._args: unknown[]) => {} };
const query = 'breakwater';
const searchApi = async (q: string, _options: { signal: AbortSignal }) => [\`hit for \${q}\`];
`;
/** What the test reads once the example ran; then the process must be free to exit. */
const EPILOGUE = `
const retryDelays = Array.from({ length: 1_000 }, (_, i) => client.options.retryStrategy?.(i + 1));
const listed = registry.snapshot().instances.map((i) => ({ kind: i.kind, name: i.name, state: (i as { state?: string }).state }));
console.log(JSON.stringify({ wait, stats: perUser.stats(), retryDelays, hits, listed }));
perUser.dispose();
registry.dispose();
client.disconnect();
`;

interface Output {
  wait: number;
  stats: { roundTrips: number; fallbackDecisions: number; storeAvailable: boolean };
  retryDelays: unknown[];
  hits: string[];
  listed: { kind: string; name: string; state: string }[];
}

let example: CompiledExample | undefined;
let output: Promise<Output> | undefined;

beforeAll(async () => {
  example = await compileReadmeExample({
    name: 'redis',
    headings: [HEADING, POLICY_HEADING],
    prelude: PRELUDE,
    epilogue: EPILOGUE,
  });
}, 60_000);

afterAll(() => removeExample(example));

describeRedis('the README example of RedisRateLimiter', (redis) => {
  const run = (): Promise<Output> =>
    (output ??= runExample<Output>(example!, { REDIS_URL: redis().url }));

  it('compiles with TypeScript under module and moduleResolution nodenext, strict', () => {
    expect(example?.error).toBeUndefined();
  });

  it('runs against a real server, and its first decision is made by Redis, not by the fallback', async () => {
    const { wait, stats } = await run();
    expect(wait).toBe(0);
    expect(stats.fallbackDecisions).toBe(0);
    expect(stats.roundTrips).toBe(2);
    expect(stats.storeAvailable).toBe(true);
  });

  it('its sequel runs a call through the limiter in a pipeline, and the registry lists the limiter', async () => {
    const { hits, listed } = await run();
    expect(hits).toEqual(['hit for breakwater']);
    expect(listed).toEqual([{ kind: 'redisRateLimiter', name: 'search', state: 'available' }]);
  });

  it('its ioredis client waits at most 500 ms between reconnection attempts, however long Redis is away', async () => {
    const { retryDelays } = await run();
    for (const delay of retryDelays) {
      expect(typeof delay).toBe('number');
      expect(delay).toBeGreaterThan(0);
      expect(delay).toBeLessThanOrEqual(500);
    }
  });
});
