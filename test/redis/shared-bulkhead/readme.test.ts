/**
 * The README's RedisBulkhead example, as a user would take it: compiled by TypeScript under
 * `nodenext` against the BUILT package and ioredis, then run against a real Redis server. Its
 * call must get a permit from Redis (not from the fallback) with a fencing token, and the
 * process must be free to exit afterwards.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runNodeScript } from '../../support/child.js';
import { readmeBlocks } from '../../support/readme.js';
import { describeRedis } from '../../support/redis-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const HEADING = 'Concurrency limits across processes (Redis)';
/** Inside the package (for `breakwater/redis` to resolve to its build), ignored by git. */
const dir = join(root, 'test-artifacts', `readme-redis-bulkhead-${process.pid}`);
const tsc = join(
  createRequire(import.meta.url).resolve('typescript/package.json'),
  '..',
  'bin',
  'tsc',
);

/** What the example uses without defining it: a logger, a database and an order id. */
const PRELUDE = `const log = { warn: (..._args: unknown[]) => {} };
const orderId = 42;
const fences: (number | undefined)[] = [];
const db = {
  async query(_sql: string, params: unknown[], options: { fence: number | undefined }) {
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

let compileError: string | undefined;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/redis/index.d.ts'))) {
    throw new Error('The package is not built (missing dist/redis/index.d.ts): run npm run build');
  }
  const blocks = readmeBlocks(HEADING, 'ts');
  expect(blocks).toHaveLength(1);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'example.ts'), `${PRELUDE}${blocks[0]!.code}\n${EPILOGUE}`);
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

describeRedis('the README example of RedisBulkhead', (redis) => {
  it('compiles under nodenext, strict, and runs against a real server: the call holds a permit from Redis with a fencing token', async () => {
    expect(compileError).toBeUndefined();
    const exit = await runNodeScript(join(dir, 'out/example.js'), [], root, 20_000, {
      env: { REDIS_URL: redis().url },
    });
    expect(exit.killed, 'still running after 20 s').toBe(false);
    expect(exit.stderr).toBe('');
    expect(exit.code).toBe(0);
    const out = JSON.parse(exit.stdout) as {
      order: { id: number };
      fences: number[];
      stats: { admitted: number; fallbackAdmissions: number; inFlight: number };
    };
    expect(out.order).toEqual({ id: 42 });
    expect(out.fences).toHaveLength(1);
    expect(out.fences[0]).toBeGreaterThan(0);
    expect(out.stats).toMatchObject({ admitted: 1, fallbackAdmissions: 0, inFlight: 0 });
  });
});
