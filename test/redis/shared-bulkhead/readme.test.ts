/**
 * The README's RedisBulkhead example, as a user would take it: compiled by TypeScript under
 * `nodenext` against the BUILT package and ioredis, then run against a real Redis server. Its
 * call must get a permit from Redis (not from the fallback) with a fencing token, and the
 * process must be free to exit afterwards.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CompiledExample,
  compileReadmeExample,
  removeExample,
  runExample,
} from '../../support/readme-example.js';
import { describeRedis } from '../../support/redis-server.js';

const HEADING = 'Concurrency limits across processes (Redis)';

/** What the example uses without defining it: a logger, a database and an order id. */
const PRELUDE = `const log = { warn: (..._args: unknown[]) => {} };
const orderId = 42;
type Fence = { slot: number | undefined; token: number | undefined };
const fences: Fence[] = [];
const db = {
  async query(_sql: string, params: unknown[], options: { fence: Fence }) {
    fences.push(options.fence);
    return { id: params[0] };
  },
};
`;
const EPILOGUE = `
console.log(JSON.stringify({ order, fences, stats: ordersDb.stats() }));
ordersDb.dispose();
redis.disconnect();
`;

interface Output {
  order: { id: number };
  fences: { slot: number; token: number }[];
  stats: { admitted: number; fallbackAdmissions: number; inFlight: number };
}

let example: CompiledExample | undefined;

beforeAll(async () => {
  example = await compileReadmeExample({
    name: 'redis-bulkhead',
    headings: [HEADING],
    prelude: PRELUDE,
    epilogue: EPILOGUE,
  });
}, 60_000);

afterAll(() => removeExample(example));

describeRedis('the README example of RedisBulkhead', (redis) => {
  it('compiles under nodenext, strict, and runs against a real server: the call holds a permit from Redis with a slot and a fencing token', async () => {
    expect(example?.error).toBeUndefined();
    const out = await runExample<Output>(example!, { REDIS_URL: redis().url });
    expect(out.order).toEqual({ id: 42 });
    expect(out.fences).toHaveLength(1);
    expect(out.fences[0]!.token).toBeGreaterThan(0);
    expect(out.fences[0]!.slot).toBe(0);
    expect(out.stats).toMatchObject({ admitted: 1, fallbackAdmissions: 0, inFlight: 0 });
  });
});
