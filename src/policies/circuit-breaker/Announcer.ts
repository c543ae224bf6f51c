import { type Disposer, Listeners } from '../../events/Listeners.js';
import { rejectedChannel } from '../../telemetry/channels.js';
import { stateChangeChannel } from './diagnostics.js';
import type { CallOutcomeEvent, RejectedEvent, StateChangeEvent } from './events.js';
import { STATE_NAMES } from './state.js';

/** @internal Receives every state change of a breaker (its name and the event), without counting as a listener. */
export type TransitionSink = (name: string, event: StateChangeEvent) => void;

/** The listener list of every breaker event nobody listens to; never added to. */
// biome-ignore lint/suspicious/noExplicitAny: one empty list stands for a list of any event
const NO_LISTENERS: Listeners<any> = new Listeners();

/**
 * @internal Who hears of a breaker: its listener lists, the registry's transition sink and the
 * diagnostics channels. Each list is the shared empty one until its first listener (few
 * breakers have any): the emitters read `size` as before, from an object of the same class.
 */
export class Announcer {
  private stateChanged: Listeners<StateChangeEvent> = NO_LISTENERS;
  private onSucceeded: Listeners<CallOutcomeEvent> = NO_LISTENERS;
  private onFailed: Listeners<CallOutcomeEvent> = NO_LISTENERS;
  private rejected: Listeners<RejectedEvent> = NO_LISTENERS;
  private sink: TransitionSink | undefined = undefined;

  constructor(private readonly name: string) {}

  /** The listeners of successes, read by the controller on every call it records. */
  get succeeded(): Listeners<CallOutcomeEvent> {
    return this.onSucceeded;
  }

  /** The listeners of failures. */
  get failed(): Listeners<CallOutcomeEvent> {
    return this.onFailed;
  }

  /** Sends every transition to `sink` too (a registry's); replaces the one set before. */
  setSink(sink: TransitionSink | undefined): void {
    this.sink = sink;
  }

  onStateChange(listener: (event: StateChangeEvent) => void): Disposer {
    if (this.stateChanged === NO_LISTENERS) this.stateChanged = new Listeners();
    return this.stateChanged.add(listener);
  }
  onSuccess(listener: (event: CallOutcomeEvent) => void): Disposer {
    if (this.onSucceeded === NO_LISTENERS) this.onSucceeded = new Listeners();
    return this.onSucceeded.add(listener);
  }
  onFailure(listener: (event: CallOutcomeEvent) => void): Disposer {
    if (this.onFailed === NO_LISTENERS) this.onFailed = new Listeners();
    return this.onFailed.add(listener);
  }
  onRejected(listener: (event: RejectedEvent) => void): Disposer {
    if (this.rejected === NO_LISTENERS) this.rejected = new Listeners();
    return this.rejected.add(listener);
  }

  /** True when a listener of any of the breaker's own lists is registered. */
  get listened(): boolean {
    return (
      this.stateChanged.size !== 0 ||
      this.onSucceeded.size !== 0 ||
      this.onFailed.size !== 0 ||
      this.rejected.size !== 0
    );
  }

  /** Drops every listener; disposers handed out before still remove from the lists they were made for. */
  clear(): void {
    this.stateChanged = NO_LISTENERS;
    this.onSucceeded = NO_LISTENERS;
    this.onFailed = NO_LISTENERS;
    this.rejected = NO_LISTENERS;
  }

  /**
   * Tells whoever listens of a transition (already made and counted) from state code `from`
   * to `to`. The rates and counts describe the window that made it open, when one did (NaN
   * and 0 otherwise).
   */
  transition(
    from: number,
    to: number,
    reason: StateChangeEvent['reason'],
    generation: number,
    failureRate: number,
    slowCallRate: number,
    callsInWindow: number,
    breakDuration: number,
  ): void {
    const sink = this.sink;
    if (this.stateChanged.size === 0 && sink === undefined && !stateChangeChannel.hasSubscribers) {
      return;
    }
    const event: StateChangeEvent = {
      from: STATE_NAMES[from]!,
      to: STATE_NAMES[to]!,
      reason,
      generation,
      failureRate,
      slowCallRate,
      callsInWindow,
      breakDuration,
    };
    if (this.stateChanged.size !== 0) this.stateChanged.emit(event);
    if (sink !== undefined) sink(this.name, event);
    if (stateChangeChannel.hasSubscribers)
      stateChangeChannel.publish({ name: this.name, ...event });
  }

  /** True when a refusal has someone to tell: a rejection listener or the channel. */
  get rejectionWatched(): boolean {
    return this.rejected.size !== 0 || rejectedChannel.hasSubscribers;
  }

  /** Tells the rejection listeners and channel that the breaker refused a call with `error` in state `s`. */
  rejection(error: Error, s: number): void {
    const state = STATE_NAMES[s]!;
    if (this.rejected.size !== 0) this.rejected.emit({ error, state });
    if (rejectedChannel.hasSubscribers) {
      rejectedChannel.publish({ kind: 'circuitBreaker', name: this.name, reason: state, error });
    }
  }
}
