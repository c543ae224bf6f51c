/** The store's errors: stable codes, class hierarchy, guards working across package copies. */
import { describe, expect, it } from 'vitest';
import { BreakwaterError, isPolicyRejection } from '../../src/index.js';
import {
  isStoreError,
  StoreError,
  StoreErrorCode,
  StoreTimeoutError,
  StoreUnavailableError,
} from '../../src/redis/index.js';

describe('store errors', () => {
  it('have stable codes', () => {
    expect(StoreErrorCode).toEqual({
      StoreTimeout: 'ERR_BREAKWATER_STORE_TIMEOUT',
      StoreUnavailable: 'ERR_BREAKWATER_STORE_UNAVAILABLE',
    });
    expect(new StoreTimeoutError('api', 20).code).toBe('ERR_BREAKWATER_STORE_TIMEOUT');
    expect(new StoreUnavailableError('api', new Error('x')).code).toBe(
      'ERR_BREAKWATER_STORE_UNAVAILABLE',
    );
  });

  it('StoreTimeoutError names the store and its timeout', () => {
    const error = new StoreTimeoutError('api', 20);
    expect(error.message).toBe('Store "api" gave no decision within 20 ms');
    expect(error.name).toBe('StoreTimeoutError');
    expect(error.storeName).toBe('api');
    expect(error.timeout).toBe(20);
  });

  it('StoreUnavailableError keeps the client error as cause and quotes it', () => {
    const cause = new Error('Connection is closed.');
    const error = new StoreUnavailableError('api', cause);
    expect(error.message).toBe('Store "api" could not decide: Connection is closed.');
    expect(error.name).toBe('StoreUnavailableError');
    expect(error.cause).toBe(cause);
    expect(new StoreUnavailableError('api', 'plain').message).toBe(
      'Store "api" could not decide: plain',
    );
  });

  it('are BreakwaterErrors and StoreErrors, not policy rejections', () => {
    for (const error of [new StoreTimeoutError('a', 1), new StoreUnavailableError('a', 0)]) {
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(BreakwaterError);
      expect(error).toBeInstanceOf(StoreError);
      expect(isStoreError(error)).toBe(true);
      expect(isPolicyRejection(error)).toBe(false);
    }
    expect(new StoreTimeoutError('a', 1)).not.toBeInstanceOf(StoreUnavailableError);
    expect(new StoreUnavailableError('a', 0)).not.toBeInstanceOf(StoreTimeoutError);
    expect(isStoreError(new Error('x'))).toBe(false);
  });

  it('instanceof holds for an error of another copy of the package (same brand and code)', () => {
    const foreign = Object.assign(new Error('from another copy'), {
      code: 'ERR_BREAKWATER_STORE_TIMEOUT',
    });
    Object.defineProperty(foreign, Symbol.for('breakwater.error'), { value: true });
    expect(foreign).toBeInstanceOf(StoreTimeoutError);
    expect(foreign).toBeInstanceOf(StoreError);
    expect(foreign).not.toBeInstanceOf(StoreUnavailableError);
  });
});
