/**
 * Calls a decorator by hand, the way each decorator mode calls it (the test runner's transform
 * does not compile decorator syntax; the compiled forms run in test/decorators/*-standard and
 * *-legacy test files).
 */

export type Fn = (...args: unknown[]) => unknown;

/** Calls a decorator as TC39 decorators do; returns the method that replaces `fn`. */
export function tc39(decorator: unknown, fn: Fn, name = 'method', kind = 'method'): Fn {
  return (decorator as (value: Fn, context: object) => Fn)(fn, {
    kind,
    name,
    static: false,
    private: false,
    addInitializer() {},
    access: {},
    metadata: {},
  });
}

/** Calls a decorator as legacy `experimentalDecorators` do; returns the descriptor. */
export function legacy(
  decorator: unknown,
  descriptor: PropertyDescriptor | undefined,
  name = 'method',
): PropertyDescriptor {
  const result = (decorator as (t: object, k: string, d?: PropertyDescriptor) => unknown)(
    {},
    name,
    descriptor,
  );
  return (result ?? descriptor) as PropertyDescriptor;
}
