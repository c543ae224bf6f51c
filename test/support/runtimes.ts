/**
 * The runtimes the smoke suite (test/runtimes/) runs on, whatever Node runs Vitest: each the npm
 * package of its Linux x64 build, installed in test/runtimes/install/node_modules by `.ci/run`
 * (`npm ci --ignore-scripts` there), or in BREAKWATER_RUNTIMES_DIR. Without them the runtime
 * tests are skipped with one loud line, unless the CI variable is set: then they fail.
 */
import { accessSync, constants, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { root } from './build.js';
import { inCi } from './redis-server.js';

/** Where `npm ci` in test/runtimes/install puts the runtimes. */
export const RUNTIMES_DIR =
  process.env.BREAKWATER_RUNTIMES_DIR || join(root, 'test/runtimes/install/node_modules');

/** A runtime with a command line: how to run an ES module file with it. */
export interface CommandLineRuntime {
  /** The name its smoke line starts with (`node`, `bun`, `deno`). */
  readonly name: string;
  /** The start of the version it must report (`22.` for the Node 22 binary). */
  readonly version: string;
  readonly executable: string;
  /** The arguments before the script. */
  readonly args: readonly string[];
  /** Added to the environment: no update checks or telemetry (CI has no network for them). */
  readonly env: Readonly<Record<string, string>>;
}

const quiet = { DO_NOT_TRACK: '1', DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' };

/** Node 20, 22 and 24, Bun and Deno, by label. */
export const commandLineRuntimes: Readonly<Record<string, CommandLineRuntime>> = {
  'Node 20': {
    name: 'node',
    version: '20.',
    executable: join(RUNTIMES_DIR, 'node20/bin/node'),
    args: [],
    env: {},
  },
  'Node 22': {
    name: 'node',
    version: '22.',
    executable: join(RUNTIMES_DIR, 'node22/bin/node'),
    args: [],
    env: {},
  },
  'Node 24': {
    name: 'node',
    version: '24.',
    executable: join(RUNTIMES_DIR, 'node24/bin/node'),
    args: [],
    env: {},
  },
  Bun: {
    name: 'bun',
    version: '1.',
    executable: join(RUNTIMES_DIR, '@oven/bun-linux-x64-baseline/bin/bun'),
    args: [],
    env: quiet,
  },
  Deno: {
    name: 'deno',
    version: '2.',
    executable: join(RUNTIMES_DIR, '@deno/linux-x64-glibc/deno'),
    // No permission is needed to load modules; --no-lock leaves no deno.lock behind.
    args: ['run', '--no-prompt', '--no-lock'],
    env: quiet,
  },
};

/** Cloudflare's workerd, run with `workerd test <config>`. */
export const WORKERD = join(RUNTIMES_DIR, '@cloudflare/workerd-linux-64/bin/workerd');

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The runtimes' executables that are missing. */
export function missingRuntimes(): string[] {
  return [...Object.values(commandLineRuntimes).map((r) => r.executable), WORKERD].filter(
    (file) => !executable(file),
  );
}

function missingMessage(missing: readonly string[]): string {
  return `runtimes not installed (${missing.join(', ')}): run npm ci --ignore-scripts in test/runtimes/install`;
}

/**
 * A describe block that needs the runtimes installed: skipped with one loud line without them,
 * or failing when the CI variable is set (the runtimes are mandatory there).
 */
export function describeWithRuntimes(name: string, body: () => void): void {
  const missing = missingRuntimes();
  if (missing.length === 0) {
    describe(name, body);
    return;
  }
  if (inCi()) {
    describe(name, () => {
      it('needs the runtimes (CI is set, so this fails instead of skipping)', () => {
        throw new Error(missingMessage(missing));
      });
    });
    return;
  }
  try {
    writeFileSync(join(tmpdir(), `breakwater-runtimes-skipped-${process.ppid}`), '', {
      flag: 'wx',
    });
    console.warn(`\n!!! SKIPPED runtime tests: ${missingMessage(missing)} !!!\n`);
  } catch {
    // Said already in this Vitest run.
  }
  describe.skip(name, body);
}
