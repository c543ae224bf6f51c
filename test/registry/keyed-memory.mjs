// Heap cost of keyed registry instances. Run with --expose-gc:
//
//   node --expose-gc test/registry/keyed-memory.mjs [module] [mode] [keys] [cap]
//
// module: the library to load (a path to a built index.js, or "breakwater" for the package
//         built in dist/); test/registry/keyed-memory.test.ts builds one from src/.
// mode:   "idle" (default): `keys` keys each make one successful call through their own breaker
//         (default options: a count window of 100), then sit idle; prints the bytes per key.
//         "churn": `keys` distinct keys pushed through a registry capped at `cap` keys; prints
//         the heap once `cap` keys are held, after `2 × cap` keys and at the end.
//         "keyed-pipeline": `keys` keys each make one call through a keyed pipeline
//         (`pipeline(registry.keyed('circuitBreaker', 'api'))`); prints the bytes per key.
//         "pipelines": `keys` pipelines of one key's breaker each (what a keyed pipeline builds
//         and keeps per live key), each called once; prints the bytes per pipeline.
//
// Bytes are heapUsed plus arrayBuffers (typed arrays larger than 64 bytes live outside the
// JavaScript heap), measured after full collections. Prints one JSON line.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [moduleArg = 'breakwater', mode = 'idle', keysArg = '1000000', capArg = '100000'] =
  process.argv.slice(2);
const keys = Number(keysArg);
const cap = Number(capArg);
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const gc = /** @type {() => void} */ (globalThis.gc);

// A path (it holds a slash) is loaded as a file; anything else as a package name.
const lib = await import(
  moduleArg.includes('/') ? pathToFileURL(resolve(moduleArg)).href : moduleArg
);
const { CircuitBreaker, Registry, pipeline } = lib;

function memory() {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers, total: m.heapUsed + m.arrayBuffers };
}

/**
 * One successful call through the key's breaker, as a caller would make it.
 * @param {import('../../src/index.js').Registry} registry
 * @param {string} key
 */
function use(registry, key) {
  return pipeline(registry.keyedCircuitBreaker('api', key)).executeSync(() => 1);
}

if (mode === 'idle') {
  const registry = new Registry({ keys: { maxKeys: keys, idleTimeout: '1h' } });
  use(registry, 'warm-up');
  const before = memory();
  for (let i = 0; i < keys; i++) use(registry, `host-${i}`);
  const after = memory();
  const held = registry.snapshot().instances.length;
  process.stdout.write(
    `${JSON.stringify({
      mode,
      keys,
      held,
      bytesPerKey: (after.total - before.total) / keys,
      heapBytesPerKey: (after.heap - before.heap) / keys,
      bufferBytesPerKey: (after.buffers - before.buffers) / keys,
    })}\n`,
  );
} else if (mode === 'churn') {
  const registry = new Registry({ keys: { maxKeys: cap, idleTimeout: '1h' } });
  const base = memory();
  let i = 0;
  for (; i < cap; i++) use(registry, `host-${i}`);
  const atCap = memory();
  // The key index (a Map) grows its table once, when deletions start: measure the steady
  // state from the end of the second round of keys too.
  for (; i < Math.min(keys, 2 * cap); i++) use(registry, `host-${i}`);
  const afterTwoRounds = memory();
  for (; i < keys; i++) use(registry, `host-${i}`);
  const atEnd = memory();
  // Keeps the registry reachable until after the last measurement.
  const held = registry.snapshot().instances.length;
  process.stdout.write(
    `${JSON.stringify({
      mode,
      keys,
      cap,
      held,
      bytesAtCap: atCap.total - base.total,
      bytesAfterTwoRounds: afterTwoRounds.total - base.total,
      bytesAtEnd: atEnd.total - base.total,
      growth: (atEnd.total - base.total) / (atCap.total - base.total) - 1,
      growthAfterTwoRounds: (atEnd.total - base.total) / (afterTwoRounds.total - base.total) - 1,
    })}\n`,
  );
} else if (mode === 'keyed-pipeline') {
  const registry = new Registry({ keys: { maxKeys: keys, idleTimeout: '1h' } });
  const keyed = pipeline(registry.keyed('circuitBreaker', 'api'));
  keyed.executeSync(() => 1, { key: 'warm-up' });
  const before = memory();
  for (let i = 0; i < keys; i++) keyed.executeSync(() => 1, { key: `host-${i}` });
  const after = memory();
  const held = registry.snapshot().instances.length;
  process.stdout.write(
    `${JSON.stringify({ mode, keys, held, bytesPerKey: (after.total - before.total) / keys })}\n`,
  );
} else if (mode === 'pipelines') {
  // Breakers of their own, not the registry's (which keeps only so many live per name), each
  // made and called once before: what its first call allocates is its own.
  const breakers = Array.from({ length: keys }, () => {
    const breaker = new CircuitBreaker();
    pipeline(breaker).executeSync(() => 1);
    return breaker;
  });
  const pipelines = new Array(keys);
  const before = memory();
  for (let i = 0; i < keys; i++) {
    pipelines[i] = pipeline(breakers[i]);
    pipelines[i].executeSync(() => 1);
  }
  const after = memory();
  process.stdout.write(
    `${JSON.stringify({
      mode,
      keys,
      held: pipelines.length + breakers.length - keys,
      bytesPerPipeline: (after.total - before.total) / keys,
    })}\n`,
  );
} else {
  throw new Error(`unknown mode ${mode}`);
}
