// @ts-check
/**
 * `npm test`: the stages in order, stopping at the first that fails and naming it last, where a
 * reader of a long CI log looks first.
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** @typedef {readonly [name: string, command: readonly string[]]} Stage */

/** @type {readonly Stage[]} npm test's stages and the command each runs, in order. */
export const stages = [
  ['lint', ['npm', 'run', 'lint']],
  ['typecheck', ['npm', 'run', 'typecheck']],
  ['build', ['npm', 'run', 'build']],
  ['vitest', ['npx', '--no', 'vitest', 'run']],
  ['check:package', ['npm', 'run', 'check:package']],
];

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(0)} s`;

/**
 * Runs `list` in order in `cwd`, output passed through, and stops at the first stage that fails.
 * @param {readonly Stage[]} list
 * @param {string} cwd
 * @returns {number} The failed stage's exit code (1 when it could not start or was killed), or 0.
 */
export function runStages(list, cwd) {
  const began = performance.now();
  for (const [name, [command, ...args]] of list) {
    const stageBegan = performance.now();
    const run = spawnSync(command, args, { cwd, stdio: 'inherit' });
    const took = seconds(performance.now() - stageBegan);
    if (run.status !== 0) {
      const how = run.error
        ? run.error.message
        : run.signal
          ? `signal ${run.signal}`
          : `exit ${run.status}`;
      console.error(`\nnpm test: stage ${name} failed (${how}) after ${took}`);
      return run.status || 1;
    }
    console.log(`npm test: stage ${name} passed in ${took}`);
  }
  console.log(
    `npm test: all ${list.length} stages passed in ${seconds(performance.now() - began)}`,
  );
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = runStages(stages, root);
}
