// @ts-check
/**
 * The smoke suite's entry for workerd, bundled with the package into one module: workerd's
 * `test` command calls `test()`, and a thrown error fails it. Loading this module runs the
 * package's module scope inside workerd's global scope, where a timer, random values or I/O
 * throw, so a run that gets to `test()` proves the package does none of them at load.
 */
import { runSmoke } from './runtime.mjs';

export default {
  async test(/** @type {unknown} */ _controller, /** @type {{ RUNTIME_VERSION?: string }} */ env) {
    const result = await runSmoke(env.RUNTIME_VERSION);
    console.log(result.text);
    if (result.failed > 0) throw new Error(`${result.failed} smoke checks failed`);
  },
};
