import { afterAll, beforeAll } from 'vitest';

/**
 * The reasons of the unhandled rejections Node reports while the calling file's tests run, for
 * tests that pin that none happens (a test that needs its own count empties the array first).
 */
export function recordUnhandledRejections(): unknown[] {
  const reasons: unknown[] = [];
  const record = (reason: unknown): void => {
    reasons.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', record);
  });
  afterAll(() => {
    process.off('unhandledRejection', record);
  });
  return reasons;
}
