import { type Disposer, Listeners } from '../events/Listeners.js';
import type { RegistryTransition } from '../policies/kinds.js';

/** Transitions a registry remembers for `recentTransitions()`. */
export const RECENT_TRANSITIONS = 100;

/** @internal The last {@link RECENT_TRANSITIONS} transitions of a registry, and its listeners. */
export class TransitionLog {
  private readonly ring: (RegistryTransition | undefined)[] = new Array(RECENT_TRANSITIONS);
  private next = 0;
  private count = 0;
  private readonly listeners = new Listeners<RegistryTransition>();

  /** Records a state change `event` (a kind's own event data) of instance `name` (`key`). */
  record(name: string, key: string | undefined, event: object): void {
    // Typed as the breaker's event: the kinds with states today; another kind's shows as is.
    const entry = (
      key === undefined
        ? { ...event, name, at: Date.now() }
        : { ...event, name, key, at: Date.now() }
    ) as RegistryTransition;
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % RECENT_TRANSITIONS;
    if (this.count < RECENT_TRANSITIONS) this.count++;
    if (this.listeners.size !== 0) this.listeners.emit(entry);
  }

  /** Oldest first. */
  recent(): RegistryTransition[] {
    const out: RegistryTransition[] = [];
    const first = (this.next - this.count + RECENT_TRANSITIONS) % RECENT_TRANSITIONS;
    for (let i = 0; i < this.count; i++) out.push(this.ring[(first + i) % RECENT_TRANSITIONS]!);
    return out;
  }

  listen(listener: (transition: RegistryTransition) => void): Disposer {
    return this.listeners.add(listener);
  }

  clear(): void {
    this.ring.fill(undefined);
    this.next = 0;
    this.count = 0;
  }
}
