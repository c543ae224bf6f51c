/**
 * The portable smoke suite (test/runtimes/smoke/checks.mjs) on every runtime the package claims,
 * each a real process: Node 20, 22 and 24, Bun and Deno run the suite's file against the BUILT
 * package (dist/, loaded by its name); workerd and headless Chromium run it bundled by esbuild
 * with the package's browser build. Each prints one line, `breakwater smoke: <runtime>
 * <version>: <n> passed, <m> failed`, which this test echoes and checks. `npm test` builds
 * before Vitest runs.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { beforeAll, expect, it } from 'vitest';
import { root } from '../support/build.js';
import { describeWithChromium, launchChromium } from '../support/chromium.js';
import { commandLineRuntimes, describeWithRuntimes, WORKERD } from '../support/runtimes.js';
import { checks } from './smoke/checks.mjs';

const smokeDir = join(root, 'test/runtimes/smoke');
const outDir = join(root, 'test-artifacts/runtimes');
/**
 * workerd's compatibility date for the run: the package needs `WeakRef`, which workerd gives
 * from 2025-05-05 on (the `enable_weak_ref` flag).
 */
const COMPATIBILITY_DATE = '2025-05-05';
/** A runtime that starts, runs ten checks on a manual clock and exits: seconds at worst. */
const LIMIT_MS = 60_000;

interface SmokeLine {
  readonly runtime: string;
  readonly version: string;
  readonly passed: number;
  readonly failed: number;
}

const LINE = /^breakwater smoke: (\S+) (\S+): (\d+) passed, (\d+) failed$/m;

/** The smoke line in `output`, echoed to the test log; throws with the output when there is none. */
function smokeLine(output: string): SmokeLine {
  const m = LINE.exec(output);
  if (!m) throw new Error(`no smoke line in the output:\n${output}`);
  console.log(m[0]);
  return { runtime: m[1]!, version: m[2]!, passed: Number(m[3]), failed: Number(m[4]) };
}

/** Runs `file` with `args`, resolving with everything it wrote, whatever its exit. */
async function run(
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<{ code: number; output: string }> {
  return promisify(execFile)(file, args, {
    cwd: root,
    env: { ...process.env, ...env },
    timeout: LIMIT_MS,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number; stdout?: string; stderr?: string; message: string }) => ({
      code: typeof error.code === 'number' ? error.code : -1,
      output: `${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`,
    }),
  );
}

/** Bundles the suite's `entry` with the package's browser build (the `browser` condition). */
async function bundle(entry: string, format: 'esm' | 'iife'): Promise<string> {
  const outfile = join(outDir, `${entry}.js`);
  await build({
    entryPoints: [join(smokeDir, `${entry}.mjs`)],
    bundle: true,
    format,
    platform: 'browser',
    target: 'es2022',
    outfile,
    absWorkingDir: root,
    // Not the repository's tsconfig: its paths would bundle src/ instead of the package.
    tsconfigRaw: {},
    logLevel: 'error',
  });
  return outfile;
}

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/index.js')) || !existsSync(join(root, 'dist/browser'))) {
    throw new Error('The package is not built: run npm run build (npm test does it first)');
  }
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
});

function expectAllPassed(line: SmokeLine, runtime: string): void {
  expect(line.runtime).toBe(runtime);
  expect({ passed: line.passed, failed: line.failed }).toEqual({
    passed: checks.length,
    failed: 0,
  });
}

describeWithRuntimes('the smoke suite on runtimes with a command line', () => {
  it.each(Object.keys(commandLineRuntimes))(
    'passes every check on %s',
    async (label) => {
      const runtime = commandLineRuntimes[label]!;
      const { code, output } = await run(
        runtime.executable,
        [...runtime.args, join(smokeDir, 'main.mjs')],
        runtime.env,
      );
      const line = smokeLine(output);
      expectAllPassed(line, runtime.name);
      expect(line.version.startsWith(runtime.version), line.version).toBe(true);
      expect(code, output).toBe(0);
    },
    LIMIT_MS + 10_000,
  );
});

describeWithRuntimes('the smoke suite on workerd', () => {
  it(
    'loads the bundle in the global scope and passes every check',
    async () => {
      const worker = await bundle('worker', 'esm');
      const version = /\d{4}-\d{2}-\d{2}/.exec((await run(WORKERD, ['--version'])).output)?.[0];
      expect(version).toBeDefined();
      const config = join(outDir, 'workerd.capnp');
      await writeFile(
        config,
        `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (services = [(name = "smoke", worker = .smoke)]);
const smoke :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${COMPATIBILITY_DATE}",
  bindings = [(name = "RUNTIME_VERSION", text = "${version}")],
);
`,
      );
      expect((await readFile(worker, 'utf8')).includes('dist/browser/')).toBe(true);
      const { code, output } = await run(WORKERD, ['test', config]);
      expectAllPassed(smokeLine(output), 'workerd');
      expect(output).toMatch(/\[ PASS \] smoke/);
      expect(code, output).toBe(0);
    },
    LIMIT_MS + 10_000,
  );
});

describeWithChromium('the smoke suite in headless Chromium', () => {
  it(
    'runs the browser bundle in a page and passes every check',
    async () => {
      const script = await readFile(await bundle('browser', 'iife'), 'utf8');
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        await page.setContent('<!doctype html><title>breakwater smoke</title>');
        await page.evaluate((version) => {
          (globalThis as unknown as { smokeRuntimeVersion: string }).smokeRuntimeVersion = version;
        }, browser.version());
        await page.addScriptTag({ content: script });
        const result = (await page.evaluate(
          () => (globalThis as unknown as { smokeResult: Promise<{ text: string }> }).smokeResult,
        )) as { text: string };
        expectAllPassed(smokeLine(result.text), 'chromium');
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    LIMIT_MS + 10_000,
  );
});
