import { circuitBreaker, pipeline, setListenerErrorHandler } from '../../src/index.js';

/**
 * Makes one event listener and one option function throw, with the listener error handler
 * silent meanwhile, so that `breakwater_callback_errors_total` has both its series.
 */
export async function throwInCallbacks(): Promise<void> {
  setListenerErrorHandler(() => {});
  try {
    const breaker = circuitBreaker({
      window: { kind: 'consecutive', threshold: 1 },
      handle: () => {
        throw new Error('a handle predicate that throws');
      },
    });
    breaker.onStateChange(() => {
      throw new Error('a listener that throws');
    });
    await pipeline(breaker).tryExecute(() => Promise.reject(new Error('down')));
  } finally {
    setListenerErrorHandler((error) => console.error('breakwater: an event listener threw', error));
  }
}
