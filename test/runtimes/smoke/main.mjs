// @ts-check
/** The smoke suite's entry for runtimes with a command line: Node, Bun, Deno. */
import { runSmoke } from './runtime.mjs';

const result = await runSmoke();
console.log(result.text);
if (result.failed > 0) /** @type {any} */ (globalThis).process.exitCode = 1;
