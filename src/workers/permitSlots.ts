/**
 * @internal The layout of a shared bulkhead's memory (Int32 words): a header (written when the
 * state is made, and when a slot above the highest claimed so far is claimed), then one slot
 * per policy instance holding the id of its owner thread and the permits it holds. The
 * permits held in the process are the sum of the slots: each permit lives in exactly one word,
 * written by one atomic operation, so a thread stopped at any point leaves no count that a
 * reclaim cannot put right (a count kept in a word of its own beside the slots was left one too
 * high by a worker terminated between the two updates). Padded, each slot has a 128-byte line
 * of its own (two 64-byte lines: adjacent-line prefetch pairs them on many CPUs), so threads
 * writing their own slots do not fight over one line; packed, they share lines, which a sum
 * reads in fewer misses (kept to measure which wins).
 */
export interface PermitLayout {
  readonly slots: number;
  readonly padded: boolean;
  /** Index of slot 0's owner word; its held count follows it. */
  readonly first: number;
  /** Words from one slot to the next. */
  readonly stride: number;
  readonly bytes: number;
}

export const MAGIC_AT = 0;
export const MAGIC = 0x62_77_62_68; // "bwbh"
const SLOTS_AT = 1;
const PADDED_AT = 2;
/** @internal Index of the number of slots a sum reads: one above the highest ever claimed. */
export const HIGH_AT = 3;
/** Int32 words in a 128-byte line. */
const LINE = 32;

/** @internal The layout of `slots` slots, padded or packed. */
export function permitLayout(slots: number, padded: boolean): PermitLayout {
  const first = padded ? LINE : 4;
  const stride = padded ? LINE : 2;
  return { slots, padded, first, stride, bytes: (first + slots * stride) * 4 };
}

/** @internal Writes the header of `layout` into fresh memory (the state writes the magic). */
export function writeHeader(words: Int32Array, layout: PermitLayout): void {
  words[SLOTS_AT] = layout.slots;
  words[PADDED_AT] = layout.padded ? 1 : 0;
}

/** @internal The layout written in the header of `words`, or undefined when it does not fit. */
export function readLayout(words: Int32Array): PermitLayout | undefined {
  const layout = permitLayout(Atomics.load(words, SLOTS_AT), Atomics.load(words, PADDED_AT) === 1);
  return layout.slots >= 1 && layout.bytes <= words.byteLength ? layout : undefined;
}

/** Owner word of a slot being emptied by {@link reclaimSlots}. */
const RECLAIMING = -1;

/**
 * @internal Claims a free slot for `owner` (a positive id); returns the index of its owner
 * word, or -1 when every slot is owned.
 */
export function claimSlot(words: Int32Array, layout: PermitLayout, owner: number): number {
  for (let i = 0; i < layout.slots; i++) {
    const at = layout.first + i * layout.stride;
    if (Atomics.compareExchange(words, at, 0, owner) !== 0) continue;
    for (let high = Atomics.load(words, HIGH_AT); high < i + 1; ) {
      const seen = Atomics.compareExchange(words, HIGH_AT, high, i + 1);
      if (seen === high) break;
      high = seen;
    }
    return at;
  }
  return -1;
}

/** @internal The permits held in the process: the sum of the slots claimed so far. */
export function heldInProcess(words: Int32Array, layout: PermitLayout): number {
  const end = layout.first + Atomics.load(words, HIGH_AT) * layout.stride;
  let sum = 0;
  for (let at = layout.first + 1; at < end; at += layout.stride) sum += Atomics.load(words, at);
  return sum;
}

/**
 * @internal Gives the permits of every slot owned by `owner` back to the process and frees
 * the slots; returns how many permits came back. Only for an owner that can no longer run
 * (its thread exited): a live one would give its permits back a second time. The owner word
 * is swapped first, so two threads reclaiming the same owner take each slot once.
 */
export function reclaimSlots(words: Int32Array, layout: PermitLayout, owner: number): number {
  let permits = 0;
  for (let i = 0; i < layout.slots; i++) {
    const at = layout.first + i * layout.stride;
    if (Atomics.compareExchange(words, at, owner, RECLAIMING) !== owner) continue;
    permits += Atomics.exchange(words, at + 1, 0);
    Atomics.store(words, at, 0);
  }
  return permits;
}
