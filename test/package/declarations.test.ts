/**
 * The published declarations (dist/, built by `npm run build`; `npm test` builds before Vitest):
 * they carry nothing marked `@internal`, and a consumer's program using every entry point
 * type-checks against them, the declarations themselves checked too (no `skipLibCheck`), so a
 * public type that names a stripped one fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { entries, outputName } from '../../tsdown.config';
import { typeCheckConsumer } from '../support/consumer';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = join(root, 'dist');

beforeAll(() => {
  const missing = Object.keys(entries)
    .map((subpath) => join(dist, `${outputName(subpath)}.d.ts`))
    .filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`The package is not built (missing ${missing.join(', ')}): run npm run build`);
  }
});

/** Every declaration file under dist/, relative to it. */
function declarationFiles(): string[] {
  return readdirSync(dist, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.d\.c?ts$/.test(file))
    .sort();
}

it('no published declaration file carries an @internal declaration or member', () => {
  const files = declarationFiles();
  expect(files.length).toBeGreaterThan(2 * Object.keys(entries).length - 1);
  const marked = files.flatMap((file) =>
    readFileSync(join(dist, file), 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        line.includes('@internal') ? [`${file}:${i + 1}: ${line.trim()}`] : [],
      ),
  );
  expect(marked).toEqual([]);
});

// node10 reads `typesVersions` (the .d.cts files), bundler the `import` condition (.d.ts).
it.each(['bundler', 'node10'] as const)(
  'a consumer using every entry point type-checks against the declarations (moduleResolution %s)',
  async (resolution) => {
    const consumer = readFileSync(join(root, 'test/package/fixtures/consumer.ts'), 'utf8');
    expect(await typeCheckConsumer(consumer, { resolution, skipLibCheck: false })).toBe('');
  },
  // A whole tsc run in a child process: seconds on a quiet machine, far more under load. The
  // limit only catches a compiler that hangs.
  120_000,
);
