/**
 * The published declarations (dist/, built by `npm run build`; `npm test` builds before Vitest)
 * carry nothing marked `@internal`. A consumer's program using every entry point type-checks
 * against them, the declarations themselves checked too, in test/package/installed.test.ts.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { entries, outputName } from '../../tsdown.config';

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
