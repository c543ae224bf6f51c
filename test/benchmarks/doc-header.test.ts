/**
 * docs/benchmarks.md names the commit it measured: the generator refuses to write it from a
 * tree whose library, build settings or harness differ from the commit checked out. Tests the
 * functions that decide it, and run.mjs's refusal on a saved report; it measures nothing.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Library {
  name?: string;
  version: string;
  commit: string | null;
  uncommitted?: string[];
}
// The harness is plain JavaScript outside the type-checked program: loaded by URL, typed here.
const harness = (file: string) => import(/* @vite-ignore */ pathToFileURL(join(root, file)).href);
const { libraryLine } = (await harness('benchmarks/lib/doc.mjs')) as {
  libraryLine: (lib: Library) => string;
};
const { docRefusal, library } = (await harness('benchmarks/lib/env.mjs')) as {
  docRefusal: (lib: Library) => string | undefined;
  library: (dir: string) => Required<Library>;
};
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A git repository with a package.json and src/a.ts, committed. */
function repository(): { dir: string; git: (...args: string[]) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-bench-doc-'));
  dirs.push(dir);
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      [
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@example.com',
        '-c',
        'commit.gpgsign=false',
        ...args,
      ],
      { cwd: dir, encoding: 'utf8' },
    ).trim();
  git('init', '-q');
  writeFileSync(join(dir, 'package.json'), '{ "name": "breakwater", "version": "9.9.9" }\n');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(dir, 'README.md'), 'docs\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  return { dir, git };
}

describe('the commit the benchmark doc names', () => {
  it('is the commit checked out when the measured paths are clean, and the doc line names it', () => {
    const { dir, git } = repository();
    writeFileSync(join(dir, 'README.md'), 'docs changed\n');
    const lib = library(dir);
    expect(lib).toEqual({
      name: 'breakwater',
      version: '9.9.9',
      commit: git('rev-parse', '--short', 'HEAD'),
      uncommitted: [],
    });
    expect(docRefusal(lib)).toBeUndefined();
    expect(libraryLine(lib)).toBe(
      `breakwater 9.9.9 (commit ${lib.commit}), built by \`npm run build\` and loaded from \`dist/\``,
    );
  });

  it('refuses a tree with uncommitted changes to src/ (modified or new files), naming them', () => {
    const { dir, git } = repository();
    writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 2;\n');
    writeFileSync(join(dir, 'src', 'b.ts'), 'export const b = 1;\n');
    const lib = library(dir);
    expect(lib.uncommitted).toEqual(['src/a.ts', 'src/b.ts']);
    const reason = docRefusal(lib);
    expect(reason).toContain(`differs from commit ${git('rev-parse', '--short', 'HEAD')}`);
    expect(reason).toContain('uncommitted: src/a.ts, src/b.ts');
    expect(reason).toContain('commit (or stash) the changes');
  });

  it('refuses a report made outside git, or by the old generator from a modified src/', () => {
    expect(docRefusal({ version: '1.0.0', commit: null })).toMatch(/names no commit/);
    expect(docRefusal({ version: '1.0.0', commit: 'bbb6ddc (src/ modified)' })).toMatch(
      /differs from commit bbb6ddc \(uncommitted: src\/\)/,
    );
  });

  it('run.mjs --from a report of a modified tree writes no doc and exits 2 without measuring', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'breakwater-bench-doc-'));
    dirs.push(dir);
    const report = JSON.parse(readFileSync(join(root, 'docs', 'benchmarks.json'), 'utf8'));
    report.library = { ...report.library, commit: 'abc1234', uncommitted: ['src/index.ts'] };
    writeFileSync(join(dir, 'report.json'), JSON.stringify(report));
    const out = join(dir, 'benchmarks.md');
    const result = await promisify(execFile)(
      process.execPath,
      ['benchmarks/run.mjs', '--from', join(dir, 'report.json'), '--doc', out],
      { cwd: root },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /--doc: not written: the measured tree differs from commit abc1234/,
    );
    expect(() => readFileSync(out)).toThrow();
  });
});
