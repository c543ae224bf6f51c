/**
 * Compiles the decorator fixtures (and the library sources they import) with a given
 * TypeScript compiler and decorator mode into a temporary folder, type checking them on the
 * way, and loads the result. The same fixture classes thus run as TC39 decorators and as legacy
 * `experimentalDecorators`, as emitted by TypeScript 5 and by TypeScript 7.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

export type Fixtures = typeof import('./fixtures/classes.js');

export interface Variant {
  /** `typescript` (5.x) or the `typescript7` alias (7.x). */
  readonly compiler: 'typescript' | 'typescript7';
  readonly experimentalDecorators: boolean;
}

export interface Compiled {
  readonly fixtures: Fixtures;
  /** The emitted fixture classes (JavaScript). */
  readonly output: string;
  /** The compiler's version, as it reports it. */
  readonly version: string;
  readonly dispose: () => Promise<void>;
}

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const fixtureFiles = ['classes.ts', 'types.ts'].map((f) =>
  join(root, 'test/decorators/fixtures', f),
);

function compilerBin(compiler: Variant['compiler']): string {
  return join(dirname(require.resolve(`${compiler}/package.json`)), 'bin', 'tsc');
}

export function describeVariant(v: Variant): string {
  const ts = v.compiler === 'typescript' ? 'TypeScript 5' : 'TypeScript 7';
  return `${ts}, ${v.experimentalDecorators ? 'legacy experimentalDecorators' : 'TC39 decorators'}`;
}

export async function compile(variant: Variant): Promise<Compiled> {
  const out = await mkdtemp(join(tmpdir(), 'breakwater-decorators-'));
  const config = {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2022'],
      module: 'ESNext',
      moduleResolution: 'Bundler',
      strict: true,
      experimentalDecorators: variant.experimentalDecorators,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
      types: ['node'],
      typeRoots: [join(root, 'node_modules/@types')],
      rootDir: root,
      outDir: join(out, 'build'),
      noEmitOnError: true,
      pretty: false,
    },
    files: fixtureFiles,
  };
  const configFile = join(out, 'tsconfig.json');
  await writeFile(configFile, JSON.stringify(config, null, 2));
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n');
  const bin = compilerBin(variant.compiler);
  const run = promisify(execFile);
  const { stdout: version } = await run(process.execPath, [bin, '--version']);
  try {
    await run(process.execPath, [bin, '-p', configFile], { cwd: out });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    await rm(out, { recursive: true, force: true });
    throw new Error(
      `${describeVariant(variant)} failed to compile the fixtures:\n${stdout ?? ''}${stderr ?? ''}`,
    );
  }
  const entry = join(out, 'build/test/decorators/fixtures/classes.js');
  const fixtures = (await import(/* @vite-ignore */ pathToFileURL(entry).href)) as Fixtures;
  return {
    fixtures,
    output: entry,
    version: version.trim(),
    dispose: () => rm(out, { recursive: true, force: true }),
  };
}
