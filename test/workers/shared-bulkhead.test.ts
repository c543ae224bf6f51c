/**
 * The shared bulkhead in one thread: a Bulkhead whose count lives in shared memory, its slots,
 * their reclaim and its checks. Across real worker threads: workers.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  Bulkhead,
  BulkheadRejectedError,
  OptionsError,
  pipeline,
  UsageError,
} from '../../src/index.js';
import { SharedBulkhead } from '../../src/workers/index.js';
import { readLayout, reclaimSlots } from '../../src/workers/permitSlots.js';
import { optionsError } from '../support/errors.js';

describe('SharedBulkhead', () => {
  it('property: instances built from one state admit and release a random trace as one in-process Bulkhead does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 2 })), { maxLength: 300 }),
        fc.constantFrom<'padded' | 'packed'>('padded', 'packed'),
        (max, trace, layout) => {
          const model = new Bulkhead({ maxConcurrent: max });
          const first = new SharedBulkhead({ maxConcurrent: max, slots: 3, layout });
          const copies = [first, new SharedBulkhead(first.state), new SharedBulkhead(first.state)];
          const held = [0, 0, 0];
          for (const [take, which] of trace) {
            const b = copies[which]!;
            if (take) {
              const admitted = b.admit(0);
              expect(admitted).toBe(model.admit(0));
              if (admitted === 0) held[which]!++;
            } else if (held[which]! > 0) {
              held[which]!--;
              b.releaseSuccess();
              model.releaseSuccess();
            }
            expect(b.inFlight).toBe(model.inFlight);
            expect(b.heldHere).toBe(held[which]);
          }
        },
      ),
    );
  });

  it('is a Bulkhead: instances built from one state share maxConcurrent, and a pipeline refuses past it', async () => {
    const here = new SharedBulkhead({ maxConcurrent: 2, name: 'db' });
    const there = new SharedBulkhead(structuredClone(here.state));
    expect(there).toBeInstanceOf(Bulkhead);
    let finish = () => {};
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const a = pipeline(here).execute(() => held);
    const b = pipeline(there).execute(() => held);
    expect(here.inFlight).toBe(2);
    expect(here.heldHere).toBe(1);
    const refused = await pipeline(there)
      .execute(() => 3)
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BulkheadRejectedError);
    expect(refused).toMatchObject({ reason: 'full', maxConcurrent: 2, policyName: 'db' });
    finish();
    await Promise.all([a, b]);
    expect(there.inFlight).toBe(0);
    expect(there.stats()).toMatchObject({
      inFlight: 0,
      admitted: 1,
      rejectionsByReason: { full: 1 },
    });
  });

  it('the packed layout behaves as the padded one', () => {
    const packed = new SharedBulkhead({ maxConcurrent: 1, layout: 'packed', slots: 3 });
    const copy = new SharedBulkhead(packed.state);
    expect(packed.state.buffer.byteLength).toBe((4 + 3 * 2) * 4);
    expect(packed.admit(0)).toBe(0);
    expect(copy.admit(0)).toBe(-1);
    packed.release(0, 0, Number.NaN);
    expect(copy.admit(0)).toBe(0);
    expect(copy.inFlight).toBe(1);
  });

  it('takes 128 bytes per slot, padded, and 8,320 bytes for the default 64 slots', () => {
    const b = new SharedBulkhead();
    expect(b.state.buffer.byteLength).toBe(8_320);
    const one = new SharedBulkhead({ slots: 1 });
    const two = new SharedBulkhead({ slots: 2 });
    expect(two.state.buffer.byteLength - one.state.buffer.byteLength).toBe(128);
  });

  it('refuses a state whose slots are all owned with a UsageError, and frees a slot on dispose', () => {
    const first = new SharedBulkhead({ slots: 2, name: 'pool' });
    const second = new SharedBulkhead(first.state);
    expect(() => new SharedBulkhead(first.state)).toThrow(UsageError);
    expect(() => new SharedBulkhead(first.state)).toThrow(/2 slots of shared bulkhead "pool"/);
    expect(second.admit(0)).toBe(0);
    // A slot whose calls are in flight is freed when the last of them ends.
    second.dispose();
    expect(() => new SharedBulkhead(first.state)).toThrow(UsageError);
    second.release(0, 0, Number.NaN);
    expect(new SharedBulkhead(first.state).inFlight).toBe(0);
  });

  it('reclaims the permits and slots of an exited owner once, and never its own thread', () => {
    const b = new SharedBulkhead({ maxConcurrent: 10, slots: 4 });
    const words = new Int32Array(b.state.buffer);
    const layout = readLayout(words)!;
    // A slot owned by thread 41 (owner id 42) holding 3 permits, as a worker leaves it.
    const other = new SharedBulkhead(b.state);
    const slot = layout.first + layout.stride;
    Atomics.store(words, slot, 42);
    expect(other.admit(0) + other.admit(0) + other.admit(0)).toBe(0);
    expect(b.inFlight).toBe(3);
    expect(b.reclaim(41)).toBe(3);
    expect(b.inFlight).toBe(0);
    expect(reclaimSlots(words, layout, 42)).toBe(0);
    expect(Atomics.load(words, slot)).toBe(0);
    expect(() => b.reclaim(0)).toThrow(UsageError);
    expect(optionsError(() => b.reclaim(-1)).option).toBe('threadId');
  });

  it('validates its options as Bulkhead does, has no queue, cannot be reconfigured, and checks a state', () => {
    expect(optionsError(() => new SharedBulkhead({ maxConcurrent: 0 })).option).toBe(
      'maxConcurrent',
    );
    expect(optionsError(() => new SharedBulkhead({ maxQueue: 5 as 0 }))).toMatchObject({
      option: 'maxQueue',
      value: 5,
    });
    expect(optionsError(() => new SharedBulkhead({ slots: 0 })).option).toBe('slots');
    expect(optionsError(() => new SharedBulkhead({ slots: 5_000 })).option).toBe('slots');
    expect(() => new SharedBulkhead(3).reconfigure(4)).toThrow(UsageError);
    const state = new SharedBulkhead(3).state;
    expect(state.options).toEqual({ maxConcurrent: 3 });
    for (const bad of [
      { ...state, kind: 'rateLimiter' },
      { ...state, buffer: new SharedArrayBuffer(state.buffer.byteLength) },
    ]) {
      expect(optionsError(() => new SharedBulkhead(bad as typeof state)).option).toBe('state');
    }
    expect(() => new SharedBulkhead({ layout: 'sparse' as 'packed' })).toThrow(OptionsError);
  });
});
