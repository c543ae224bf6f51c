/**
 * What the published package holds besides its code: the licence, and every document the
 * README links to, so the README's links work from an installed copy.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The files `npm pack` would publish, by path. */
function packedFiles(): Set<string> {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
  });
  const [pack] = JSON.parse(out) as [{ files: { path: string }[] }];
  return new Set(pack.files.map((f) => f.path));
}

describe('the published package', () => {
  const files = packedFiles();

  it('holds the licence its package.json names', () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { license: string };
    expect(files.has('LICENSE')).toBe(true);
    expect(readFileSync(`${root}LICENSE`, 'utf8')).toContain(`${pkg.license} License`);
  });

  it('holds every file the README links to by a relative path', () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^[a-z]+:/.test(target));
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((target) => !files.has(target.replace(/^\.\//, '')))).toEqual([]);
  });
});
