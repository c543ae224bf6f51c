/**
 * A gate of a kind the library does not know, defined here with the public step protocol
 * alone (a descriptor-free engine: at most `limit` calls at once), runs in pipelines as the
 * library's own gates do.
 */
import { describe, expect, it } from 'vitest';
import { type ErrorCode, PolicyRejectedError, pipeline, retry, timeout } from '../../src/index.js';
import {
  type Gate,
  NEEDS_NOTHING,
  Outcome,
  REJECTED,
  StepKind,
  type StepNeeds,
} from '../../src/kinds/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';

class CapReachedError extends PolicyRejectedError {
  constructor() {
    super('ERR_EXAMPLE_CAP' as ErrorCode, 'the cap is reached', 'exampleCap', 'cap');
  }
}

class ConcurrencyCap implements Gate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly latencyEvery = 0;
  readonly mayWait = false;
  inFlight = 0;
  readonly outcomes: Outcome[] = [];
  disposed = false;
  private readonly error = new CapReachedError();

  constructor(private readonly limit: number) {}

  needs(): StepNeeds {
    return { ...NEEDS_NOTHING, callSlot: true };
  }
  admit(): number {
    if (this.inFlight >= this.limit) return REJECTED;
    return this.inFlight++;
  }
  release(_token: number, outcome: Outcome): void {
    this.inFlight--;
    this.outcomes.push(outcome);
  }
  releaseSuccess(token: number, value: unknown): void {
    this.release(token, this.classifyResult(value));
  }
  classifyError(): Outcome {
    return Outcome.Failure;
  }
  classifyResult(_value: unknown): Outcome {
    return Outcome.Success;
  }
  rejection(): Error {
    return this.error;
  }
  dispose(): void {
    this.disposed = true;
  }
}

describe('a gate of a kind defined outside the library', () => {
  it('admits up to its limit, refuses beyond it with its own rejection, and gets every permit back', async () => {
    const cap = new ConcurrencyCap(2);
    const p = pipeline(cap);
    const held = [deferred<string>(), deferred<string>()];
    const running = held.map((d) => p.execute(() => d.promise));
    const refused = await p.tryExecute(() => Promise.resolve('third'));
    expect(refused).toMatchObject({ ok: false, rejected: true });
    expect(refused.ok === false && refused.error).toBeInstanceOf(CapReachedError);
    held[0]!.resolve('one');
    held[1]!.reject(new Error('down'));
    await expect(running[0]).resolves.toBe('one');
    await expect(running[1]).rejects.toThrow('down');
    expect(cap.inFlight).toBe(0);
    expect(cap.outcomes).toEqual([Outcome.Success, Outcome.Failure]);
  });

  it('runs synchronously through executeSync, as a gate that never waits does', () => {
    const cap = new ConcurrencyCap(1);
    expect(pipeline(cap).executeSync(() => 42)).toBe(42);
    expect(cap.outcomes).toEqual([Outcome.Success]);
  });

  it('sits under a retry and a timeout: each attempt takes a permit, its refusals are not retried', async () => {
    const clock = new ManualClock();
    const cap = new ConcurrencyCap(1);
    const p = pipeline(
      retry({ clock, maxAttempts: 3, delay: 10 }),
      timeout({ clock, timeout: 1_000 }),
      cap,
    );
    let attempts = 0;
    const call = p.execute(async () => {
      attempts++;
      if (attempts < 3) throw new Error('flaky');
      return 'ok';
    });
    await clock.advanceAsync(100);
    await expect(call).resolves.toBe('ok');
    expect(cap.outcomes).toEqual([Outcome.Failure, Outcome.Failure, Outcome.Success]);

    const blocker = deferred<string>();
    const held = pipeline(cap).execute(() => blocker.promise);
    let refusedAttempts = 0;
    const refused = p.tryExecute(async () => {
      refusedAttempts++;
      return 'never';
    });
    await clock.advanceAsync(100);
    expect(await refused).toMatchObject({ ok: false, rejected: true });
    expect(refusedAttempts).toBe(0);
    blocker.resolve('done');
    await held;
    expect(cap.inFlight).toBe(0);
  });

  it('is disposed with its pipeline', () => {
    const cap = new ConcurrencyCap(1);
    pipeline(cap).dispose();
    expect(cap.disposed).toBe(true);
  });

  it('is refused when it lacks a part of the protocol, naming what was given', () => {
    const cap = new ConcurrencyCap(1) as unknown as Record<string, unknown>;
    const { admit: _, ...withoutAdmit } = { ...cap, admit: undefined };
    expect(() => pipeline(withoutAdmit as never)).toThrow(/policy/i);
  });
});
