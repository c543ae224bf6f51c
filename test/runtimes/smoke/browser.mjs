// @ts-check
/**
 * The smoke suite's entry for a browser, bundled with the package's browser build into one
 * script: it prints its line on the console and leaves the result on `globalThis.smokeResult`
 * for the page's driver to read. The driver may set `globalThis.smokeRuntimeVersion` first: a
 * page's user agent gives only the browser's major version.
 */
import { runSmoke } from './runtime.mjs';

/** @type {any} */
const g = globalThis;
g.smokeResult = runSmoke(g.smokeRuntimeVersion).then((result) => {
  console.log(result.text);
  return result;
});
