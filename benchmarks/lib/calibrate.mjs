/**
 * The calibration loop: ns per `await` of a trivial async function, the best of a few
 * batches. It measures how fast the core a process runs on is at promise-heavy code right now
 * (see cpu.mjs). Run as a script, it prints the figure.
 */
import { pathToFileURL } from 'node:url';

const target = async () => 1;

/** The best ns per awaited call over `batches` batches of `calls` calls. */
export async function awaitLoopNs(batches = 5, calls = 100_000) {
  let best = Number.POSITIVE_INFINITY;
  for (let k = 0; k < batches; k++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await target();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / calls);
  }
  return best;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(await awaitLoopNs());
}
