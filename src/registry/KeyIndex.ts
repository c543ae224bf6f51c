/**
 * @internal Key to slot, for a set of keys that churns at a cap (keyed instances evicted and
 * added one for one). A `Map` is the obvious choice but grows under churn: deleted entries
 * stay in its table until it is rebuilt, and the rebuild that deletions trigger at a cap of
 * 100,000 keys doubles the table (+3.5 MiB) and keeps it doubled. A dictionary-mode object
 * (one made with a null prototype) reuses the room of deleted keys and shrinks, so its size
 * follows the number of keys held; lookups cost about the same. With no prototype, a key such
 * as `__proto__` or `constructor` is an own property like any other and never reaches an
 * object's prototype.
 */
export class KeyIndex {
  private slots: Record<string, number> = Object.create(null);

  get(key: string): number | undefined {
    return this.slots[key];
  }

  set(key: string, slot: number): void {
    this.slots[key] = slot;
  }

  delete(key: string): void {
    delete this.slots[key];
  }

  clear(): void {
    this.slots = Object.create(null);
  }
}
