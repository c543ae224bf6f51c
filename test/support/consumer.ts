/**
 * Type-checks a TypeScript program the way a project that installed the package does: in a
 * temporary directory whose node_modules/breakwater is this repository (its dist/ and
 * package.json), with tsc in a child process.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);

/** How the consumer's project compiles. */
export interface ConsumerOptions {
  /** `moduleResolution`: node10 reads `typesVersions` (.d.cts), bundler the `import` types. */
  readonly resolution: 'node10' | 'node16' | 'bundler';
  /** False checks the package's declarations too, not only their use. @default true */
  readonly skipLibCheck?: boolean;
}

/** tsc's report on `source` as a consumer's consumer.ts: '' when it type-checks. */
export async function typeCheckConsumer(source: string, options: ConsumerOptions): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'breakwater-consumer-'));
  try {
    await mkdir(join(dir, 'node_modules'));
    await symlink(root, join(dir, 'node_modules', 'breakwater'), 'dir');
    await writeFile(join(dir, 'consumer.ts'), source);
    const { resolution } = options;
    const config = {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        module:
          resolution === 'node16' ? 'node16' : resolution === 'bundler' ? 'esnext' : 'commonjs',
        moduleResolution: resolution,
        strict: true,
        noEmit: true,
        skipLibCheck: options.skipLibCheck ?? true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
        pretty: false,
      },
      files: ['consumer.ts'],
    };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(config));
    const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
    return await promisify(execFile)(process.execPath, [tsc, '-p', dir], { cwd: dir }).then(
      () => '',
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
