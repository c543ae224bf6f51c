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

export function library() {
  const pkg = readJson(join(rootDir, 'package.json'));
  const git = (args) => {
    const r = spawnSync('git', args, { cwd: rootDir, encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : undefined;
  };
  const commit = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'src']);
  return {
    name: pkg.name,
    version: pkg.version,
    commit: commit === undefined ? null : `${commit}${dirty ? ' (src/ modified)' : ''}`,
  };
}
