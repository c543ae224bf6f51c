/** The OptionsError of a constructor or factory, for tests of option validation. */
import { expect } from 'vitest';
import { OptionsError } from '../../src/index.js';

/** The OptionsError `make` throws (fails the test when it throws nothing or something else). */
export function optionsError(make: () => unknown): OptionsError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError, but nothing was thrown');
}

/** The OptionsError `make` throws or rejects with (fails the test when it does neither). */
export async function optionsRejection(make: () => unknown): Promise<OptionsError> {
  let error: unknown;
  try {
    await make();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(OptionsError);
  return error as OptionsError;
}

/** The OptionsError `make` throws (a policy's own verdict on its options), or undefined. */
export function optionsErrorOrNone(make: () => unknown): OptionsError | undefined {
  try {
    make();
    return undefined;
  } catch (error) {
    if (error instanceof OptionsError) return error;
    throw error;
  }
}
