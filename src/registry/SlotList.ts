import { grown } from '../policies/shared/grown.js';

/** The end of a {@link SlotList}, and a slot in none. */
export const NIL = -1;

/**
 * @internal A recency list of slots, linked through typed arrays indexed by slot: `head` is
 * the most recently used, `tail` the least. The arrays grow with the slots they index.
 */
export class SlotList {
  prev = new Int32Array(0);
  next = new Int32Array(0);
  head = NIL;
  tail = NIL;

  /** Puts `slot`, in no list, at the head. */
  link(slot: number): void {
    this.prev[slot] = NIL;
    this.next[slot] = this.head;
    if (this.head !== NIL) this.prev[this.head] = slot;
    this.head = slot;
    if (this.tail === NIL) this.tail = slot;
  }

  /** Takes `slot` out of the list. */
  unlink(slot: number): void {
    const p = this.prev[slot]!;
    const n = this.next[slot]!;
    if (p !== NIL) this.next[p] = n;
    else this.head = n;
    if (n !== NIL) this.prev[n] = p;
    else this.tail = p;
  }

  /** Moves `slot`, in the list, to the head. */
  toHead(slot: number): void {
    if (this.head === slot) return;
    this.unlink(slot);
    this.link(slot);
  }

  /** Room for slots below `n`, the links kept. */
  grow(n: number): void {
    this.prev = grown(this.prev, n);
    this.next = grown(this.next, n);
  }

  /** Empty, with room for no slot. */
  clear(): void {
    this.prev = new Int32Array(0);
    this.next = new Int32Array(0);
    this.head = this.tail = NIL;
  }
}
