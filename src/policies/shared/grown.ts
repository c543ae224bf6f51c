/**
 * @internal `a` copied into a new typed array of its type with room for `n` elements: how the
 * tables kept in typed arrays (timer heaps, keyed limits, keyed instances) grow.
 */
export function grown<A extends Float64Array | Int32Array | Uint8Array>(a: A, n: number): A {
  const out = new (a.constructor as new (n: number) => A)(n);
  out.set(a);
  return out;
}
