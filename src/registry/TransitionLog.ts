import { type Disposer, Listeners } from '../events/Listeners.js';
import type { StateChangeEvent } from '../policies/circuit-breaker/events.js';

/** A state change of one of a registry's breakers, as plain data. */
export interface RegistryTransition extends StateChangeEvent {
  /** The registry name of the breaker. */
  readonly name: string;
  /** The key of a keyed breaker (absent for named ones). */
  readonly key?: string;
  /** When it happened, in ms since the Unix epoch (`Date.now()`). */
  readonly at: number;
}

/** Transitions a registry remembers for `recentTransitions()`. */
export const RECENT_TRANSITIONS = 100;

/** @internal The last {@link RECENT_TRANSITIONS} transitions of a registry, and its listeners. */
export class TransitionLog {
  private readonly ring: (RegistryTransition | undefined)[] = new Array(RECENT_TRANSITIONS);
  private next = 0;
  private count = 0;
  private readonly listeners = new Listeners<RegistryTransition>();

  record(name: string, key: string | undefined, event: StateChangeEvent): void {
    const entry: RegistryTransition =
      key === undefined
        ? { ...event, name, at: Date.now() }
        : { ...event, name, key, at: Date.now() };
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
