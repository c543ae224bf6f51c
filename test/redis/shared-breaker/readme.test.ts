/**
 * The README's example of shared breaker signals, as a user would take it: compiled by
 * TypeScript under `nodenext` against the BUILT package and ioredis, then run against a real
 * Redis server; the call goes through, the registry lists the signals, and the process exits
 * by itself once the example disposes what it made.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ChildExit, runNodeScript } from '../../support/child.js';
import { readmeBlocks } from '../../support/readme.js';
import { describeRedis } from '../../support/redis-server.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const HEADING = 'Circuit breakers across processes (Redis)';
const dir = join(root, 'test-artifacts', `readme-shared-breaker-${process.pid}`);
const tsc = join(
  createRequire(import.meta.url).resolve('typescript/package.json'),
  '..',
  'bin',
  'tsc',
);

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

let compileError: string | undefined;
let ran: Promise<ChildExit> | undefined;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/redis/index.d.ts'))) {
    throw new Error('The package is not built (missing dist/redis/index.d.ts): run npm run build');
  }
  const blocks = readmeBlocks(HEADING, 'ts');
  expect(blocks).toHaveLength(1);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'example.ts'), `${PRELUDE + blocks[0]!.code}\n${EPILOGUE}`);
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

describeRedis('the README example of shared breaker signals', (redis) => {
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
