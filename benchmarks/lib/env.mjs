/** The machine, the library under test, and the preconditions of a run (deps, build). */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = dirname(dirname(fileURLToPath(import.meta.url)));
export const rootDir = dirname(benchDir);

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function sh(command, args, cwd) {
  const r = spawnSync(command, args, {
    cwd,
    stdio: ['ignore', process.stderr, process.stderr],
    shell: process.platform === 'win32',
  });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${r.status})`);
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** The version of each dependency of benchmarks/package.json as installed, or null. */
export function installedVersions() {
  const { dependencies } = readJson(join(benchDir, 'package.json'));
  const out = {};
  for (const name of Object.keys(dependencies)) {
    const file = join(benchDir, 'node_modules', name, 'package.json');
    out[name] = existsSync(file) ? readJson(file).version : null;
  }
  return out;
}

/** The version a dependency spec pins: "1.2.3" or an alias "npm:name@1.2.3". */
const pinned = (spec) => spec.slice(spec.lastIndexOf('@') + 1);

/**
 * Installs the benchmark dependencies from the lock file when one is missing or is not the
 * version package.json pins (e.g. after a pull that changed them).
 */
export function ensureDependencies() {
  const { dependencies } = readJson(join(benchDir, 'package.json'));
  const installed = installedVersions();
  const stale = Object.entries(dependencies).filter(
    ([name, spec]) => installed[name] !== pinned(spec),
  );
  if (stale.length === 0) return;
  console.error(
    `benchmarks/node_modules lacks ${stale.map(([n, s]) => `${n}@${pinned(s)}`).join(', ')}: ` +
      'npm ci --prefix benchmarks',
  );
  sh(npm, ['ci', '--prefix', benchDir, '--no-audit', '--no-fund'], rootDir);
}

/** Builds the library when dist/ is missing (`npm run bench` always builds first). */
export function ensureBuilt() {
  if (existsSync(join(rootDir, 'dist', 'index.js'))) return;
  console.error('dist/ is missing: npm run build');
  sh(npm, ['run', 'build'], rootDir);
}

/**
 * Copies dist/ to a temporary folder that lives as long as this process and returns its path,
 * so that a rebuild of dist/ during a run (tsdown cleans the folder first) cannot break the
 * run or mix two builds in one report.
 */
export function snapshotDist() {
  const dir = mkdtempSync(join(tmpdir(), 'breakwater-dist-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(rootDir, 'dist'), dir, { recursive: true });
  // The copy has no package.json above it: mark its .js files as ES modules.
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  return dir;
}

export function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    cpu: cpus[0]?.model?.trim() ?? 'unknown',
    cores: typeof os.availableParallelism === 'function' ? os.availableParallelism() : cpus.length,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  };
}

/** What the measured build and the harness are made from: a change to any is a change measured. */
export const MEASURED_PATHS = ['src', 'benchmarks', 'package.json', 'tsdown.config.ts'];

/**
 * The library under test in `dir` (the repository root by default): its version, the commit
 * checked out (null outside git), and the files of {@link MEASURED_PATHS} that differ from it.
 */
export function library(dir = rootDir) {
  const pkg = readJson(join(dir, 'package.json'));
  const git = (args) => {
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    return r.status === 0 ? r.stdout : undefined;
  };
  const commit = git(['rev-parse', '--short', 'HEAD'])?.trim();
  const status = git(['status', '--porcelain', '--untracked-files=all', '--', ...MEASURED_PATHS]);
  return {
    name: pkg.name,
    version: pkg.version,
    commit: commit || null,
    // Porcelain lines are "XY path": two status letters (either may be a space), then the path.
    uncommitted: (status ?? '')
      .split('\n')
      .filter((line) => line.length > 3)
      .map((line) => line.slice(3)),
  };
}

/**
 * Why a report cannot go into docs/benchmarks.md, or undefined when it can: the doc names the
 * commit it measured, so the library, the build settings and the harness must be that commit
 * exactly (a report from a tree with uncommitted changes would name a commit it did not measure).
 */
export function docRefusal(lib) {
  if (typeof lib?.commit !== 'string' || lib.commit === '') {
    return 'the report names no commit (it was not measured in a git checkout)';
  }
  const uncommitted = Array.isArray(lib.uncommitted)
    ? lib.uncommitted
    : // Reports written before `uncommitted` existed marked a dirty tree in the commit itself.
      / \(src\/ modified\)$/.test(lib.commit)
      ? ['src/']
      : [];
  if (uncommitted.length === 0) return undefined;
  const shown = uncommitted.slice(0, 5).join(', ') + (uncommitted.length > 5 ? ', ...' : '');
  return `the measured tree differs from commit ${lib.commit.replace(/ \(.*\)$/, '')} (uncommitted: ${shown}); commit (or stash) the changes and run npm run bench:doc again, so that the doc names the commit it measured`;
}
