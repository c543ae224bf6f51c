/** Removes the listener it was returned for. Calling it twice is harmless. */
export type Disposer = () => void;

/** Receives errors thrown by event listeners; see {@link setListenerErrorHandler}. */
let listenerErrorHandler: (error: unknown) => void = (error) => {
  console.error('breakwater: an event listener threw', error);
};

/**
 * Sets where errors thrown by event listeners and by user predicates (`handle`,
 * `handleResult`, `retryAfter`) go (default: `console.error`). A throwing listener never breaks
 * the call that emitted the event, nor the other listeners; a throwing predicate is answered
 * with a safe default documented on each option.
 */
export function setListenerErrorHandler(handler: (error: unknown) => void): void {
  listenerErrorHandler = handler;
}

/**
 * Where an error thrown by user code came from: an event listener (`'listener'`), or a function
 * given as an option, such as `handle`, `handleResult`, `retryAfter` or a hedge's delay
 * (`'callback'`).
 */
export type CallbackErrorSource = 'listener' | 'callback';

/** Errors thrown by user code since the process started, by source, for metrics. */
const thrown = { listener: 0, callback: 0 };

/** @internal The errors thrown by user code since the process started, by source. */
export function callbackErrorCounts(): Readonly<Record<CallbackErrorSource, number>> {
  return thrown;
}

/**
 * @internal Counts an error thrown by user code and hands it to the configured handler, never
 * throwing.
 */
export function reportCallbackError(
  error: unknown,
  source: CallbackErrorSource = 'callback',
): void {
  thrown[source]++;
  try {
    listenerErrorHandler(error);
  } catch {
    // The error handler itself failed; nothing sensible is left to do.
  }
}

/** @internal Calls a user predicate; a throw is reported and answered with `onThrow`. */
export function ask<A>(predicate: (arg: A) => unknown, arg: A, onThrow: boolean): boolean {
  try {
    return predicate(arg) === true;
  } catch (error) {
    reportCallbackError(error);
    return onThrow;
  }
}

/**
 * The listeners of one event. The array is replaced, never mutated, on subscribe and
 * unsubscribe, so emitting needs no copy and a listener may unsubscribe while being called.
 * Emitters check `size` first so an event nobody listens to costs one branch.
 */
export class Listeners<E> {
  private list: ReadonlyArray<(event: E) => void> = [];

  get size(): number {
    return this.list.length;
  }

  add(listener: (event: E) => void): Disposer {
    this.list = [...this.list, listener];
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      const i = this.list.indexOf(listener);
      if (i >= 0) this.list = [...this.list.slice(0, i), ...this.list.slice(i + 1)];
    };
  }

  emit(event: E): void {
    const list = this.list;
    for (let i = 0; i < list.length; i++) {
      try {
        list[i]!(event);
      } catch (error) {
        reportCallbackError(error, 'listener');
      }
    }
  }

  clear(): void {
    this.list = [];
  }
}
