/**
 * The package as a user gets it: `npm pack` of this repository (dist/ as built, `npm test` builds
 * before Vitest), installed from the tarball into a scratch project in a temporary directory,
 * offline. The tools and the optional peers a consumer brings itself (TypeScript 5 and 7, @types,
 * prom-client, @opentelemetry/api, ioredis, redis) are links to this repository's node_modules,
 * so nothing is downloaded.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from './build.js';

const run = promisify(execFile);

/** What a consumer brings itself, linked from this repository's node_modules. */
const LINKED = [
  'typescript',
  'typescript7',
  '@types',
  'prom-client',
  '@opentelemetry',
  'ioredis',
  'redis',
];

/** A scratch project with the packed package installed in its node_modules. */
export interface PackedInstall {
  /** The project's directory. */
  readonly dir: string;
  /** The tarball `npm pack` made, in `dir`. */
  readonly tarball: string;
  /** Removes the project. */
  remove(): Promise<void>;
}

/**
 * Packs the package and installs the tarball into a new scratch project whose package.json has
 * `"type": "module"` (so `.ts`/`.js` files are ES modules, `.cts`/`.cjs` CommonJS).
 */
export async function installPacked(): Promise<PackedInstall> {
  const dir = await mkdtemp(join(tmpdir(), 'breakwater-installed-'));
  try {
    const packed = await run(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
      { cwd: root },
    );
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    const tarball = join(dir, filename);
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await run(
      'npm',
      [
        'install',
        '--offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--no-package-lock',
        '--loglevel=error',
        `./${filename}`,
      ],
      { cwd: dir },
    );
    for (const name of LINKED) {
      const target = join(dir, 'node_modules', name);
      await rm(target, { recursive: true, force: true });
      await symlink(join(root, 'node_modules', name), target, 'dir');
    }
    return { dir, tarball, remove: () => rm(dir, { recursive: true, force: true }) };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Runs `node file` in `dir`, resolving with what it printed; rejects with its stderr. */
export async function runInProject(dir: string, file: string): Promise<string> {
  const { stdout } = await run(process.execPath, [file], { cwd: dir, timeout: 60_000 });
  return stdout;
}

/**
 * The report of `compiler`'s tsc (`typescript`, 5.x, or the `typescript7` alias, 7.x) on the
 * project `tsconfig` in `dir`: '' when it type-checks.
 */
export async function typeCheckProject(
  dir: string,
  tsconfig: string,
  compiler: 'typescript' | 'typescript7',
): Promise<string> {
  const tsc = join(dir, 'node_modules', compiler, 'bin/tsc');
  return run(process.execPath, [tsc, '-p', tsconfig], { cwd: dir, timeout: 120_000 }).then(
    () => '',
    (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
  );
}
