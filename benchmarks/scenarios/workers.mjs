/**
 * Policies shared by worker threads (`breakwater/workers`), from one thread, against the same
 * kinds in process: `tryAcquire` on a `SharedRateLimiter` (one compare-and-swap of a BigInt64
 * word, and a fresh clock reading per call) beside `RateLimiter` (a cached reading, a field),
 * with so many permits the limit is never reached; and a permit taken and given back through
 * the gate protocol (`admit`, then `releaseSuccess`, as a pipeline does) on a `SharedBulkhead`,
 * its slots padded to 128 bytes and packed, beside `Bulkhead`. From several workers at once:
 * workers-contended.mjs.
 */
import { breakwaterModule, bwRateLimiter, LIB } from '../lib/peers.mjs';
import { BARE_SYNC, bareSync } from '../lib/rows.mjs';

export const title = 'Policies shared by worker threads, one thread';
export const order = 9.2;

const bw = await breakwaterModule('index.js');
const workers = await breakwaterModule('workers/index.js');

/** Taken at once: `tryAcquire` returns 0, `admit` returns a token >= 0. */
const taken = (o) => o.ok && o.value === 0;

/** The same rate as `bwRateLimiter`: a million per second, a burst of two billion. */
const sharedLimiter = () =>
  new workers.SharedRateLimiter({ limit: 1_000_000, period: 1_000, burst: 2_000_000_000 });

/** A permit taken and given back as a pipeline's executor does it; the op returns the token. */
function permitCycle(bulkhead) {
  return () => {
    const token = bulkhead.admit(0);
    bulkhead.releaseSuccess(token, undefined);
    return token;
  };
}

export function rows() {
  return [
    bareSync(),
    {
      library: LIB.breakwater,
      variant: 'RateLimiter tryAcquire(), in process',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => {
        const limiter = bwRateLimiter(bw);
        return () => limiter.tryAcquire();
      },
      check: taken,
    },
    {
      library: LIB.breakwater,
      variant: 'SharedRateLimiter tryAcquire(), uncontended',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => {
        const limiter = sharedLimiter();
        return () => limiter.tryAcquire();
      },
      check: taken,
    },
    {
      library: LIB.breakwater,
      variant: 'Bulkhead admit + release, in process',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => permitCycle(new bw.Bulkhead({ maxConcurrent: 100 })),
      check: taken,
    },
    {
      library: LIB.breakwater,
      variant: 'SharedBulkhead admit + release, uncontended, padded slots',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () => permitCycle(new workers.SharedBulkhead({ maxConcurrent: 100 })),
      check: taken,
    },
    {
      library: LIB.breakwater,
      variant: 'SharedBulkhead admit + release, uncontended, packed slots',
      kind: 'sync',
      baseline: BARE_SYNC,
      prepare: () =>
        permitCycle(new workers.SharedBulkhead({ maxConcurrent: 100, layout: 'packed' })),
      check: taken,
    },
  ];
}
