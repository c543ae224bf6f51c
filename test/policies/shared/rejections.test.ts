import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  type ErrorCode,
  isPolicyRejection,
  PolicyRejectedError,
  pipeline,
  retry,
} from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';

/** The rejection of a policy kind the library does not know: made here, not in src/. */
class ShedError extends PolicyRejectedError {
  constructor(reachedDependency: boolean) {
    super(
      'ERR_EXAMPLE_SHED' as ErrorCode,
      'shed by the example policy',
      'exampleShedder',
      'shedder',
      reachedDependency,
    );
  }
}

function consecutiveBreaker(clock: ManualClock): CircuitBreaker {
  return new CircuitBreaker({ clock, window: { kind: 'consecutive', threshold: 2 } });
}

describe('a rejection by a policy kind defined outside the library', () => {
  it('is a policy rejection, by instanceof and by isPolicyRejection', () => {
    const error = new ShedError(false);
    expect(error instanceof PolicyRejectedError).toBe(true);
    expect(isPolicyRejection(error)).toBe(true);
    expect(error.policy).toBe('exampleShedder');
  });

  it('made without calling the dependency, is never counted by a breaker', async () => {
    const clock = new ManualClock();
    const breaker = consecutiveBreaker(clock);
    const p = pipeline(breaker);
    for (let i = 0; i < 5; i++) {
      await p.execute(() => Promise.reject(new ShedError(false))).catch(() => {});
    }
    expect(breaker.state).toBe('closed');
    expect(breaker.stats()).toMatchObject({ failures: 0, ignored: 5 });
  });

  it('made without calling the dependency, is never retried', async () => {
    const clock = new ManualClock();
    let attempts = 0;
    const p = pipeline(retry({ clock, maxAttempts: 3, delay: 10 }));
    const running = p.tryExecute(async () => {
      attempts++;
      throw new ShedError(false);
    });
    // Time enough for every retry delay: a retried rejection would show in `attempts`.
    await clock.advanceAsync(1_000);
    expect((await running).ok).toBe(false);
    expect(attempts).toBe(1);
  });

  it('made after the call reached the dependency (as a timeout), counts as a failure', async () => {
    const clock = new ManualClock();
    const breaker = consecutiveBreaker(clock);
    const p = pipeline(breaker);
    for (let i = 0; i < 2; i++) {
      await p.execute(() => Promise.reject(new ShedError(true))).catch(() => {});
    }
    expect(breaker.state).toBe('open');
  });
});
