/**
 * The README's Redis example, as a user would take it: compiled by TypeScript under `nodenext`
 * against the BUILT package and ioredis, then run against a real Redis server. Its first
 * decision must be made by Redis (not by the fallback of a client not yet ready), and the
 * client options it recommends must reconnect soon after Redis is back.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChildExit, runNodeScript } from '../support/child.js';
import { readmeBlocks } from '../support/readme.js';
import { describeRedis } from '../support/redis-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const HEADING = 'Rate limits across processes (Redis)';
/** The sequel of the example: the limiter as a policy, in a pipeline and a registry. */
const POLICY_HEADING = 'A Redis rate limiter as a policy';
/** Inside the package (for `breakwater/redis` to resolve to its build), ignored by git. */
const dir = join(root, 'test-artifacts', `readme-redis-${process.pid}`);
const tsc = join(
  createRequire(import.meta.url).resolve('typescript/package.json'),
  '..',
  'bin',
  'tsc',
);

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

let compileError: string | undefined;
let ran: Promise<ChildExit> | undefined;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/redis/index.d.ts'))) {
    throw new Error('The package is not built (missing dist/redis/index.d.ts): run npm run build');
  }
  const blocks = readmeBlocks(HEADING, 'ts');
  expect(blocks).toHaveLength(1);
  const policy = readmeBlocks(POLICY_HEADING, 'ts');
  expect(policy).toHaveLength(1);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'example.ts'),
    `${PRELUDE + blocks[0]!.code}\n${policy[0]!.code}${EPILOGUE}`,
  );
  const config = {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      types: ['node'],
      skipLibCheck: true,
      rootDir: dir,
      outDir: join(dir, 'out'),
      noEmitOnError: true,
      pretty: false,
    },
    files: [join(dir, 'example.ts')],
  };
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
  try {
    await promisify(execFile)(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], {
      cwd: dir,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    compileError = `${stdout ?? ''}${stderr ?? ''}` || String(error);
  }
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeRedis('the README example of RedisRateLimiter', (redis) => {
  const run = async (): Promise<Output> => {
    if (compileError !== undefined) throw new Error(`It does not compile:\n${compileError}`);
    ran ??= runNodeScript(join(dir, 'out/example.js'), [], root, 20_000, {
      env: { REDIS_URL: redis().url },
    });
    const exit = await ran;
    expect(exit.killed, 'still running after 20 s').toBe(false);
    expect(exit.stderr).toBe('');
    expect(exit.code).toBe(0);
    return JSON.parse(exit.stdout) as Output;
  };

  it('compiles with TypeScript under module and moduleResolution nodenext, strict', () => {
    expect(compileError).toBeUndefined();
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
