/**
 * The README's example of shared breaker signals, as a user would take it: compiled by
 * TypeScript under `nodenext` against the BUILT package and ioredis, then run against a real
 * Redis server; the call goes through, the registry lists the signals, and the process exits
 * by itself once the example disposes what it made.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CompiledExample,
  compileReadmeExample,
  removeExample,
  runExample,
} from '../../support/readme-example.js';
import { describeRedis } from '../../support/redis-server.js';

const HEADING = 'Circuit breakers across processes (Redis)';

/** The names the example uses without defining them. */
const PRELUDE = `const log = { warn: (..._args: unknown[]) => {} };
const order = { id: 'order-1' };
const pay = async (o: { id: string }) => \`paid \${o.id}\`;
`;
/** What the test reads once the example ran; the process must then exit by itself. */
const EPILOGUE = `
await shared.sync();
const listed = registry.snapshot().instances.map((i) => ({ kind: i.kind, name: i.name, state: (i as { state?: string }).state }));
console.log(JSON.stringify({ receipt, stats: shared.stats(), listed }));
registry.dispose();
client.disconnect();
`;

interface Output {
  receipt: string;
  stats: { storeAvailable: boolean; roundTrips: number };
  listed: { kind: string; name: string; state: string }[];
}

let example: CompiledExample | undefined;
let output: Promise<Output> | undefined;

beforeAll(async () => {
  example = await compileReadmeExample({
    name: 'shared-breaker',
    headings: [HEADING],
    prelude: PRELUDE,
    epilogue: EPILOGUE,
  });
}, 60_000);

afterAll(() => removeExample(example));

describeRedis('the README example of shared breaker signals', (redis) => {
  const run = (): Promise<Output> =>
    (output ??= runExample<Output>(example!, { REDIS_URL: redis().url }));

  it('compiles with TypeScript under module and moduleResolution nodenext, strict', () => {
    expect(example?.error).toBeUndefined();
  });

  it('runs against a real server: the call goes through, Redis answers, the registry lists the signals, the process exits by itself', async () => {
    const { receipt, stats, listed } = await run();
    expect(receipt).toBe('paid order-1');
    expect(stats.storeAvailable).toBe(true);
    expect(listed).toEqual([
      { kind: 'circuitBreaker', name: 'payments', state: 'closed' },
      { kind: 'sharedSignals', name: 'payments-shared', state: 'closed' },
    ]);
  });
});
