import { describe, expect, it } from 'vitest';
import { requestContext, requestTimeLeft, runWithRequestContext } from '../../../src/http/index.js';
import {
  type ExecutionContext,
  isTimeoutError,
  OptionsError,
  pipeline,
  retry,
  timeout,
} from '../../../src/index.js';
import {
  type Gate,
  NEEDS_NOTHING,
  Outcome,
  StepKind,
  type StepNeeds,
} from '../../../src/kinds/index.js';

/** A gate that admits every call and records the criticality level it was admitted with. */
class LevelRecorder implements Gate {
  readonly stepKind = StepKind.Gate;
  readonly needsDuration = false;
  readonly latencyEvery = 0;
  readonly mayWait = false;
  readonly levels: number[] = [];
  needs(): StepNeeds {
    return NEEDS_NOTHING;
  }
  admit(_now: number, level: number): number {
    this.levels.push(level);
    return 0;
  }
  release(): void {}
  releaseSuccess(): void {}
  classifyError(): Outcome {
    return Outcome.Failure;
  }
  classifyResult(): Outcome {
    return Outcome.Success;
  }
  rejection(): Error {
    return new Error('never refuses');
  }
  dispose(): void {}
}

/** A call that ends only when its signal aborts. */
function untilAborted(signal: AbortSignal, seen: AbortSignal[]): Promise<never> {
  seen.push(signal);
  return new Promise((_, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason));
  });
}

describe('request context', () => {
  it('gives a pipeline call made within it the time left as its deadline', async () => {
    const p = pipeline(retry({ maxAttempts: 1 }));
    const seen = await runWithRequestContext({ timeout: 300 }, () =>
      p.execute(({ timeLeft }) => timeLeft),
    );
    expect(seen).toBeGreaterThan(0);
    expect(seen).toBeLessThanOrEqual(300);
    expect(await p.execute(({ timeLeft }) => timeLeft)).toBe(Number.POSITIVE_INFINITY);
  });

  it('keeps the deadline across awaits', async () => {
    const p = pipeline(retry({ maxAttempts: 1 }));
    const seen = await runWithRequestContext({ timeout: 5_000 }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await Promise.resolve();
      return p.execute(({ timeLeft }) => timeLeft);
    });
    expect(seen).toBeLessThanOrEqual(5_000);
  });

  it('ends a call at the context deadline with a TimeoutError, the function signal aborted', async () => {
    const p = pipeline(retry({ maxAttempts: 1 }));
    let signal: AbortSignal | undefined;
    const error = await runWithRequestContext({ timeout: 20 }, () =>
      p.execute(
        (context: ExecutionContext) =>
          new Promise((_, reject) => {
            signal = context.signal;
            context.signal.addEventListener('abort', () => reject(context.signal.reason));
          }),
      ),
    ).catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect(signal?.aborted).toBe(true);
  });

  it("takes the call's own timeout when it is shorter, the context's when it is", async () => {
    const p = pipeline(timeout(10_000));
    const [own, scoped] = await runWithRequestContext({ timeout: 5_000 }, () =>
      Promise.all([
        p.execute(({ timeLeft }) => timeLeft, { timeout: 50 }),
        p.execute(({ timeLeft }) => timeLeft, { timeout: '1m' }),
      ]),
    );
    expect(own).toBeLessThanOrEqual(50);
    expect(scoped).toBeLessThanOrEqual(5_000);
  });

  it('fails a call at once when the context has no time left', async () => {
    let ran = 0;
    const error = await runWithRequestContext({ timeout: 0 }, () =>
      pipeline(retry({ maxAttempts: 1 })).execute(() => ran++),
    ).catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect(ran).toBe(0);
  });

  it("gives calls the context's criticality when they give none, for execute and executeSync", async () => {
    const gate = new LevelRecorder();
    const p = pipeline(gate);
    await runWithRequestContext({ criticality: 'sheddable' }, async () => {
      await p.execute(() => 'ran');
      p.executeSync(() => 'ran');
      await p.execute(() => 'ran', { criticality: 'critical-plus' });
    });
    await p.execute(() => 'ran');
    // sheddable 0, critical-plus 3, critical (the default) 2.
    expect(gate.levels).toEqual([0, 0, 3, 2]);
  });

  it("cancels a call when the context's signal aborts, and with the call's own signal too", async () => {
    const p = pipeline(retry({ maxAttempts: 1 }));
    const client = new AbortController();
    const own = new AbortController();
    const signals: AbortSignal[] = [];
    const calls = runWithRequestContext({ signal: client.signal }, () =>
      Promise.allSettled([
        p.execute(({ signal }) => untilAborted(signal, signals)),
        p.execute(({ signal }) => untilAborted(signal, signals), { signal: own.signal }),
      ]),
    );
    client.abort(new Error('client went away'));
    const settled = await calls;
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(signals.every((s) => s.aborted)).toBe(true);
  });

  it('keeps the earlier deadline and the outer signal in a nested context', () => {
    const outer = new AbortController();
    runWithRequestContext({ timeout: 100, criticality: 'critical', signal: outer.signal }, () => {
      const deadline = requestContext()!.deadline;
      runWithRequestContext({ timeout: 10_000, criticality: 'sheddable' }, () => {
        const inner = requestContext()!;
        expect(inner.deadline).toBe(deadline);
        expect(inner.criticality).toBe('sheddable');
        expect(inner.signal).toBe(outer.signal);
        expect(requestTimeLeft()).toBeLessThanOrEqual(100);
      });
      expect(requestContext()!.criticality).toBe('critical');
    });
    expect(requestContext()).toBeUndefined();
    expect(requestTimeLeft()).toBe(Number.POSITIVE_INFINITY);
  });

  it('refuses a bad timeout, deadline, criticality or signal with an OptionsError naming it', () => {
    const run = (init: object) => () => runWithRequestContext(init, () => 0);
    expect(run({ timeout: -1 })).toThrow(OptionsError);
    expect(run({ timeout: -1 })).toThrow(/timeout/);
    expect(run({ deadline: Number.NaN })).toThrow(/deadline/);
    expect(run({ criticality: 'urgent' })).toThrow(/criticality/);
    expect(run({ signal: 'stop' })).toThrow(/signal/);
  });
});
