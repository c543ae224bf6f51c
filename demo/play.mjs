// @ts-check
/**
 * One run of the demo without the printing: two instances of the scripted dependency, one
 * called through the protection and one with a plain fetch, under the same load at once.
 */
import { performance } from 'node:perf_hooks';
import { plainCaller, protectedCaller } from './callers.mjs';
import { start } from './dependency.mjs';
import { startLoad } from './load.mjs';

/**
 * @typedef {object} Run
 * @property {ReturnType<typeof protectedCaller>} guarded The protected caller.
 * @property {import('./dependency.mjs').Dependency} protectedDependency
 * @property {import('./dependency.mjs').Dependency} plainDependency
 * @property {import('./report.mjs').Transition[]} transitions The breaker's state changes so
 *   far (grows while running).
 * @property {() => number} now The run's time in ms: 0 when `play` starts the load, -Infinity
 *   before.
 * @property {(load: { rate: number, durationMs: number }) => { guarded: import('./load.mjs').Load, plain: import('./load.mjs').Load }} play
 *   Starts both loads and the dependencies' script.
 * @property {() => Promise<void>} close Disposes of the pipeline and stops both dependencies.
 */

/**
 * Starts both dependencies and both callers, and makes one call through each before the clock
 * starts, so that loading `fetch` and opening the first connection are not counted against
 * the first second of either run (on a busy machine they took longer than the timeout).
 * @param {object} options
 * @param {readonly import('./dependency.mjs').Phase[]} options.phases
 * @param {number} options.deadline How long callers wait for an answer, in ms.
 * @param {number} options.breakDuration How long the breaker stays open, in ms.
 * @returns {Promise<Run>}
 */
export async function prepare({ phases, deadline, breakDuration }) {
  // Before `play`, the run's time is -Infinity: warm-up requests arrive before any second the
  // report counts, and meet the script's first phase.
  let epoch = Number.POSITIVE_INFINITY;
  const now = () => performance.now() - epoch;
  const protectedDependency = await start({ phases, now });
  const plainDependency = await start({ phases, now });
  const guarded = protectedCaller(protectedDependency.url, { breakDuration, deadline });
  const plain = plainCaller(plainDependency.url);
  /** @type {import('./report.mjs').Transition[]} */
  const transitions = [];
  await Promise.all([
    fetch(protectedDependency.url).then((r) => r.text()),
    fetch(plainDependency.url).then((r) => r.text()),
  ]);
  guarded.breaker.onStateChange((e) => transitions.push({ t: now(), from: e.from, to: e.to }));
  return {
    guarded,
    protectedDependency,
    plainDependency,
    transitions,
    now,
    play: ({ rate, durationMs }) => {
      epoch = performance.now();
      return {
        guarded: startLoad({ call: guarded.call, rate, durationMs, now }),
        plain: startLoad({ call: plain.call, rate, durationMs, now }),
      };
    },
    close: async () => {
      guarded.dispose();
      await Promise.all([protectedDependency.close(), plainDependency.close()]);
    },
  };
}
