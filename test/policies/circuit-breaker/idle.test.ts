/**
 * A breaker left unused after it opened: its next use must find its state in constant time,
 * however long it sat idle, and report no more transitions than a caller can observe.
 */
import { describe, expect, it } from 'vitest';
import { type CircuitBreakerOptions, Registry, type StateChangeEvent } from '../../../src/index.js';
import { ManualClock } from '../../../src/testing/index.js';
import { watchedBreaker } from '../../support/breaker.js';

const DAY = 86_400_000;

function tripped(options: CircuitBreakerOptions = {}) {
  const made = watchedBreaker({ breakDuration: 1_000, halfOpen: { maxWait: 1_000 }, ...options });
  made.breaker.trip();
  return made;
}

const path = (events: readonly StateChangeEvent[]) =>
  events.map((e) => `${e.from}->${e.to}:${e.reason}`);

describe('a breaker left unused after opening', () => {
  it('30 days idle (1 s break, 1 s max wait): its next call is admitted as a probe, with one transition reported', async () => {
    const { clock, breaker, p, events } = tripped();
    clock.advance(30 * DAY);
    await expect(p.execute(() => 'ok')).resolves.toBe('ok');
    expect(breaker.state).toBe('closed');
    expect(path(events)).toEqual([
      'closed->open:manual',
      'open->half-open:break-elapsed',
      'half-open->closed:probes-succeeded',
    ]);
    expect(breaker.stats()).toMatchObject({ transitions: 3, generation: 3 });
  });

  it('30 days idle: reading its state reports only open -> half-open, and the backoff did not grow', () => {
    const { clock, breaker, p, events } = tripped({ breakBackoff: { multiplier: 2 } });
    clock.advance(30 * DAY);
    expect(breaker.state).toBe('half-open');
    expect(breaker.toJSON()).toMatchObject({ state: 'half-open', consecutiveOpens: 1 });
    expect(path(events)).toEqual(['closed->open:manual', 'open->half-open:break-elapsed']);
    expect(() =>
      p.executeSync(() => {
        throw new Error('still down');
      }),
    ).toThrow('still down');
    // The second opening of a row: 2 × 1 s, not a break grown by every idle cycle.
    expect(events.at(-1)).toMatchObject({ to: 'open', breakDuration: 2_000 });
  });

  it('a half-open breaker that nobody calls stays half-open: its max wait runs from its first probe', () => {
    const { clock, breaker, p, events } = tripped({ halfOpen: { maxWait: 500 } });
    clock.advance(1_000 + 10_000);
    expect(breaker.state).toBe('half-open');
    const hanging = p.execute(() => new Promise(() => {}));
    void hanging;
    clock.advance(499);
    expect(breaker.state).toBe('half-open');
    clock.advance(1);
    expect(breaker.state).toBe('open');
    expect(path(events).slice(1)).toEqual([
      'open->half-open:break-elapsed',
      'half-open->open:half-open-timeout',
    ]);
  });

  it('a hanging probe left for days: at most half-open -> open -> half-open on the next read', () => {
    const { clock, breaker, p, events } = tripped();
    clock.advance(1_000);
    const hanging = p.execute(() => new Promise(() => {}));
    void hanging;
    clock.advance(30 * DAY);
    expect(breaker.state).toBe('half-open');
    expect(path(events)).toEqual([
      'closed->open:manual',
      'open->half-open:break-elapsed',
      'half-open->open:half-open-timeout',
      'open->half-open:break-elapsed',
    ]);
  });

  it('idle keyed breakers of a registry: snapshot() and recentTransitions() stay small after 30 days', () => {
    const clock = new ManualClock();
    const registry = new Registry(
      {
        circuitBreakers: {
          hosts: {
            window: { kind: 'consecutive', threshold: 1 },
            breakDuration: 1_000,
            halfOpen: { maxWait: 1_000 },
          },
        },
        keys: { idleTimeout: 'Infinity' },
      },
      { clock },
    );
    for (let i = 0; i < 10; i++) registry.keyedCircuitBreaker('hosts', `h${i}`).trip();
    clock.advance(30 * DAY);
    const entries = registry.snapshot().instances.filter((e) => e.key !== undefined);
    expect(entries.map((e) => e.kind === 'circuitBreaker' && e.state)).toEqual(
      Array(10).fill('half-open'),
    );
    // Ten openings and ten ends of break.
    expect(registry.recentTransitions()).toHaveLength(20);
  });
});
