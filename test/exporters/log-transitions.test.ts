import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CircuitBreaker,
  logTransitions,
  OptionsError,
  pipeline,
  Registry,
  type TransitionLogContext,
} from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';

function recorder() {
  const lines: { level: 'warn' | 'info'; message: string; context: TransitionLogContext }[] = [];
  return {
    lines,
    logger: {
      warn: (message: string, context: TransitionLogContext) =>
        lines.push({ level: 'warn', message, context }),
      info: (message: string, context: TransitionLogContext) =>
        lines.push({ level: 'info', message, context }),
    },
  };
}

describe('logTransitions', () => {
  it('logs an opening with the window figures as a warning and the recovery as info', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      name: 'payments',
      clock,
      window: { kind: 'count', size: 4, minimumCalls: 4 },
      failureRateThreshold: 0.5,
      breakDuration: 1_000,
    });
    const { lines, logger } = recorder();
    const stop = logTransitions(breaker, { logger });
    const p = pipeline(breaker);
    p.executeSync(() => 1);
    p.executeSync(() => 1);
    for (let i = 0; i < 2; i++) await p.tryExecute(() => Promise.reject(new Error('x')));
    clock.advance(1_000);
    p.executeSync(() => 1);
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      [
        'warn',
        'breakwater: circuit breaker "payments" closed -> open (failure-rate): failure rate 50.0 %, slow-call rate 0.0 %, 4 calls in window, open for 1000 ms',
      ],
      ['warn', 'breakwater: circuit breaker "payments" open -> half-open (break-elapsed)'],
      ['info', 'breakwater: circuit breaker "payments" half-open -> closed (probes-succeeded)'],
    ]);
    expect(lines[0]!.context).toMatchObject({
      name: 'payments',
      from: 'closed',
      to: 'open',
      failureRate: 0.5,
      callsInWindow: 4,
      breakDuration: 1_000,
    });
    stop();
    breaker.trip();
    expect(lines).toHaveLength(3);
  });

  it('logs the keyed breakers of a registry with their key written as a JSON string', () => {
    const registry = new Registry({}, { clock: new ManualClock() });
    const { lines, logger } = recorder();
    logTransitions(registry, { logger });
    registry.keyedCircuitBreaker('hosts', 'evil\nbreakwater: forged line').trip();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.message).toBe(
      'breakwater: circuit breaker "hosts" key "evil\\nbreakwater: forged line" closed -> open (manual): open for 30000 ms',
    );
    expect(lines[0]!.message).not.toContain('\n');
    expect(lines[0]!.context.key).toBe('evil\nbreakwater: forged line');
  });

  it('gives a structured logger a context without NaN: the rates only when the window opened the breaker', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({
      clock,
      window: { kind: 'consecutive', threshold: 1 },
      breakDuration: 1_000,
    });
    const { lines, logger } = recorder();
    logTransitions(breaker, { logger });
    breaker.trip();
    clock.advance(1_000);
    await pipeline(breaker).tryExecute(() => Promise.reject(new Error('x')));
    expect(lines.map((l) => l.context)).toEqual([
      {
        name: 'circuitBreaker',
        from: 'closed',
        to: 'open',
        reason: 'manual',
        generation: 1,
        callsInWindow: 0,
        breakDuration: 1_000,
      },
      {
        name: 'circuitBreaker',
        from: 'open',
        to: 'half-open',
        reason: 'break-elapsed',
        generation: 2,
        callsInWindow: 0,
        breakDuration: 0,
      },
      {
        name: 'circuitBreaker',
        from: 'half-open',
        to: 'open',
        reason: 'probes-failed',
        generation: 3,
        callsInWindow: 0,
        breakDuration: 1_000,
      },
    ]);
    breaker.reset();
    const p = pipeline(breaker);
    expect(() =>
      p.executeSync(() => {
        throw new Error('y');
      }),
    ).toThrow('y');
    // A consecutive window has no rate: the run that opened it is what it reports.
    expect(lines.at(-1)!.context).toMatchObject({
      reason: 'consecutive-failures',
      callsInWindow: 1,
    });
    expect(lines.at(-1)!.context).not.toHaveProperty('failureRate');
    for (const { context } of lines) expect(JSON.stringify(context)).not.toContain('null');
  });

  it('reports the consecutive failures that opened a consecutive window, not a rate over every call since it last opened', () => {
    const breaker = new CircuitBreaker({
      name: 'api',
      window: { kind: 'consecutive', threshold: 3 },
      breakDuration: 1_000,
      clock: new ManualClock(),
    });
    const { lines, logger } = recorder();
    logTransitions(breaker, { logger });
    const p = pipeline(breaker);
    for (let i = 0; i < 997; i++) p.executeSync(() => 1);
    for (let i = 0; i < 3; i++) {
      try {
        p.executeSync(() => {
          throw new Error('down');
        });
      } catch {}
    }
    expect(lines.map((l) => l.message)).toEqual([
      'breakwater: circuit breaker "api" closed -> open (consecutive-failures): 3 consecutive failures, open for 1000 ms',
    ]);
  });

  it('rejects a logger without warn and info', () => {
    expect(() => logTransitions(new CircuitBreaker(), { logger: {} as never })).toThrow(
      OptionsError,
    );
  });
});

describe('logTransitions with console', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** What console.warn and console.info were called with, captured instead of printed. */
  function captureConsole() {
    const calls: { level: string; args: unknown[] }[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args) => calls.push({ level: 'warn', args }));
    vi.spyOn(console, 'info').mockImplementation((...args) => calls.push({ level: 'info', args }));
    return calls;
  }

  it.each([
    ['the default logger', undefined],
    ['passed as the logger', { logger: console }],
  ])(
    'console (%s) prints each transition once: the message alone, without the context object repeating it',
    (_, options) => {
      const clock = new ManualClock();
      const registry = new Registry(
        { circuitBreakers: { payments: { breakDuration: 1_000 } } },
        { clock },
      );
      const calls = captureConsole();
      logTransitions(registry, options);
      const breaker = registry.circuitBreaker('payments');
      breaker.trip();
      clock.advance(1_000);
      expect(breaker.state).toBe('half-open');
      breaker.reset();
      expect(calls).toEqual([
        {
          level: 'warn',
          args: [
            'breakwater: circuit breaker "payments" closed -> open (manual): open for 1000 ms',
          ],
        },
        {
          level: 'warn',
          args: ['breakwater: circuit breaker "payments" open -> half-open (break-elapsed)'],
        },
        {
          level: 'info',
          args: ['breakwater: circuit breaker "payments" half-open -> closed (manual)'],
        },
      ]);
    },
  );
});
