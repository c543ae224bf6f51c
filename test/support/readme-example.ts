/**
 * A README example as a user would take it: its TypeScript blocks, between a prelude (names it
 * uses without defining them) and an epilogue (what the test reads), compiled by TypeScript
 * under `nodenext`, strict, against the BUILT package, then run as a child process.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { type ChildExit, runNodeScript } from './child.js';
import { readmeBlocks } from './readme.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(
  createRequire(import.meta.url).resolve('typescript/package.json'),
  '..',
  'bin',
  'tsc',
);

/** An example written out and compiled; `error` is the compiler's output when it failed. */
export interface CompiledExample {
  readonly dir: string;
  readonly error: string | undefined;
}

/**
 * Writes the one TypeScript block under each of `headings`, in order, between `prelude` and
 * `epilogue`, into a folder of test-artifacts/ named after `name` (inside the package, so that
 * `breakwater/redis` resolves to its build), and compiles it.
 */
export async function compileReadmeExample(options: {
  readonly name: string;
  readonly headings: readonly string[];
  readonly prelude: string;
  readonly epilogue: string;
}): Promise<CompiledExample> {
  if (!existsSync(join(root, 'dist/redis/index.d.ts'))) {
    throw new Error('The package is not built (missing dist/redis/index.d.ts): run npm run build');
  }
  const code = options.headings.map((heading) => {
    const blocks = readmeBlocks(heading, 'ts');
    expect(blocks, heading).toHaveLength(1);
    return blocks[0]!.code;
  });
  const dir = join(root, 'test-artifacts', `readme-${options.name}-${process.pid}`);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'example.ts'),
    `${options.prelude}${code.join('\n')}\n${options.epilogue}`,
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
    return { dir, error: undefined };
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    return { dir, error: `${stdout ?? ''}${stderr ?? ''}` || String(error) };
  }
}

/** Deletes the example's folder. */
export function removeExample(example: CompiledExample | undefined): Promise<void> {
  return example === undefined
    ? Promise.resolve()
    : rm(example.dir, { recursive: true, force: true });
}

/**
 * Runs the compiled example with `env`; it must exit by itself within 20 s, with code 0 and
 * nothing on stderr. Returns the JSON it printed.
 */
export async function runExample<T>(
  example: CompiledExample,
  env: Record<string, string>,
): Promise<T> {
  if (example.error !== undefined) throw new Error(`It does not compile:\n${example.error}`);
  const exit: ChildExit = await runNodeScript(
    join(example.dir, 'out/example.js'),
    [],
    root,
    20_000,
    {
      env,
    },
  );
  expect(exit.killed, 'still running after 20 s').toBe(false);
  expect(exit.stderr).toBe('');
  expect(exit.code).toBe(0);
  return JSON.parse(exit.stdout) as T;
}
