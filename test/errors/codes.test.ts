/**
 * Each kind's errors own their codes in its folder; `ErrorCode` gathers them. The codes are
 * stable: this pins every one, in the order `ErrorCode` lists them.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/index.js';

describe('ErrorCode', () => {
  it('keeps every stable code under its name', () => {
    expect(Object.entries(ErrorCode)).toEqual([
      ['CircuitOpen', 'ERR_BREAKWATER_CIRCUIT_OPEN'],
      ['CircuitIsolated', 'ERR_BREAKWATER_CIRCUIT_ISOLATED'],
      ['BulkheadFull', 'ERR_BREAKWATER_BULKHEAD_FULL'],
      ['RateLimited', 'ERR_BREAKWATER_RATE_LIMITED'],
      ['LoadShed', 'ERR_BREAKWATER_LOAD_SHED'],
      ['ConcurrencyLimit', 'ERR_BREAKWATER_CONCURRENCY_LIMIT'],
      ['DeadlineTooShort', 'ERR_BREAKWATER_DEADLINE_TOO_SHORT'],
      ['Timeout', 'ERR_BREAKWATER_TIMEOUT'],
      ['RetryExhausted', 'ERR_BREAKWATER_RETRY_EXHAUSTED'],
      ['ChaosFault', 'ERR_BREAKWATER_CHAOS_FAULT'],
      ['StoreTimeout', 'ERR_BREAKWATER_STORE_TIMEOUT'],
      ['StoreUnavailable', 'ERR_BREAKWATER_STORE_UNAVAILABLE'],
      ['InvalidOption', 'ERR_BREAKWATER_INVALID_OPTION'],
      ['InvalidConfig', 'ERR_BREAKWATER_INVALID_CONFIG'],
      ['Usage', 'ERR_BREAKWATER_USAGE'],
    ]);
  });
});
