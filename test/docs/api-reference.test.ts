/**
 * The API reference (`npm run docs:api`, TypeDoc over every entry point in package.json
 * "exports") builds with no warning: typedoc.json treats warnings as errors and validates links,
 * exports and documentation, so a broken `{@link}`, a public type that refers to one the
 * reference cannot show, or an export or method signature without a comment fails this test.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'breakwater-api-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** Module page names TypeDoc gives each subpath of package.json "exports". */
function entryModules(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  return Object.keys(pkg.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? 'index' : subpath.slice(2)));
}

it('builds the API reference of every entry point with no warning', () => {
  const typedoc = join(root, 'node_modules/typedoc/bin/typedoc');
  const run = spawnSync(process.execPath, [typedoc, '--out', out], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  const output = `${run.stdout}${run.stderr}`;
  expect(output.split('\n').filter((line) => /\[(warning|error)\]/.test(line))).toEqual([]);
  expect(run.status, output).toBe(0);
  for (const name of entryModules()) {
    expect(existsSync(join(out, 'modules', `${name}.html`)), name).toBe(true);
  }
}, 180_000);
