/** The error a call throws or rejects with, checked to be of the expected class. */
import { expect } from 'vitest';
import { OptionsError } from '../../src/index.js';

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** The error `run` throws, checked to be a `type` (fails the test when it throws nothing). */
export function errorOf<E>(type: ErrorClass<E>, run: () => unknown): E {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as E;
  }
  throw new Error(`expected a ${type.name}, but nothing was thrown`);
}

/** The error `run` throws or rejects with, checked to be a `type` (fails when it does neither). */
export async function rejectionOf<E>(type: ErrorClass<E>, run: () => unknown): Promise<E> {
  let error: unknown;
  try {
    await run();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(type);
  return error as E;
}

/** The OptionsError `make` throws (fails the test when it throws nothing or something else). */
export function optionsError(make: () => unknown): OptionsError {
  return errorOf(OptionsError, make);
}

/** The OptionsError `make` throws or rejects with (fails the test when it does neither). */
export function optionsRejection(make: () => unknown): Promise<OptionsError> {
  return rejectionOf(OptionsError, make);
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
