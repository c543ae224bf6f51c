/**
 * Loading the package does nothing but define things: no timer, no random value, no I/O in any
 * module scope of any entry, ES module or CommonJS build. Edge runtimes refuse these in a
 * module's global scope (workerd throws; test/runtimes/smoke.test.ts loads the browser build
 * there), and a timer started at load would keep a short script alive. Runs the BUILT package
 * (dist/) in a fresh Node process with those functions counted (fixtures/quiet-load.mjs).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { entries } from '../../tsdown.config';
import { root } from '../support/build.js';
import { runNodeScript } from '../support/child.js';

const fixture = join(root, 'test/runtimes/fixtures/quiet-load.mjs');
const specifiers = Object.keys(entries).map((subpath) =>
  subpath === '.' ? 'breakwater' : `breakwater/${subpath.slice(2)}`,
);

async function callsAtLoad(
  targets: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Record<string, Record<string, number>>> {
  const exit = await runNodeScript(fixture, targets, root, 60_000, { env });
  expect(exit.stderr).toBe('');
  expect(exit).toMatchObject({ code: 0, killed: false });
  return JSON.parse(exit.stdout) as Record<string, Record<string, number>>;
}

it('no entry starts a timer, draws a random value or does I/O when it is loaded', async () => {
  const calls = await callsAtLoad(specifiers);
  const expected = Object.fromEntries(
    ['import', 'require'].flatMap((how) => specifiers.map((s) => [`${how} ${s}`, {}])),
  );
  expect(calls).toEqual(expected);
}, 70_000);

it('the check counts such calls when a module makes them (a leaky module as the control)', async () => {
  const dir = join(root, 'test-artifacts/quiet-load-control/dist');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const leaky = join(dir, 'leaky.cjs');
  await writeFile(
    leaky,
    [
      'setTimeout(() => {}, 0);',
      'Math.random();',
      'require("node:fs").readFileSync(__filename);',
      'require("node:net").createServer();',
    ].join('\n'),
  );
  const calls = await callsAtLoad([leaky], { QUIET_LOAD_DIST: `${dir}/` });
  expect(calls[`import ${leaky}`]).toEqual({
    setTimeout: 1,
    'Math.random': 1,
    'fs.readFileSync': 1,
    'net.createServer': 1,
  });
}, 70_000);
