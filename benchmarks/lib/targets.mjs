/**
 * The functions the benchmarks call through the policies, shared by the bare rows and the
 * library rows so both call the very same target.
 */

export const asyncTarget = async () => 1;
export const syncTarget = () => 1;

class Widget {
  constructor() {
    this.v = 3;
  }
  get() {
    return this.v;
  }
}

/**
 * Eleven targets of different kinds (async and sync, smi, double, string, object, array, null,
 * undefined, a bound method, a `new Promise` factory, an extra-tick async function). Running
 * them through one pipeline first makes the call sites the pipeline shares between targets
 * polymorphic or megamorphic, as in a service that guards many different calls.
 */
export function pollutionTargets() {
  return [
    async () => 1,
    () => 1,
    () => Promise.resolve('a'),
    async () => ({ a: 1, b: 2 }),
    () => 1.5,
    async (ctx) => (ctx?.signal ? [1, 2, 3] : null),
    () => new Promise((resolve) => resolve(42)),
    async () => {
      await null;
      return 'x';
    },
    Widget.prototype.get.bind(new Widget()),
    async function named() {
      return undefined;
    },
    () => new Map(),
  ];
}

/**
 * Calls `call(target)` for every target, `rounds` times over, awaiting each call (the value
 * may be a plain value: awaiting it is harmless).
 */
export async function pollute(call, targets, rounds) {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < targets.length; i++) await call(targets[i]);
  }
}

/** Rounds of {@link pollute} per polluted row: 3000 as in the peer baseline, fewer in --quick. */
export function pollutionRounds(quick) {
  return quick ? 20 : 3000;
}
