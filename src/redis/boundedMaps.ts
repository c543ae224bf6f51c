// Maps of keys that forget their oldest entry past a size, so a limiter's memory stays bounded
// however many keys it sees.

/** @internal Sets `key` in `map` as its most recent entry, forgetting the oldest past `max`. */
export function keepLatest<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) forgetOldest(map);
}

/**
 * @internal Sets `key` in `map`, forgetting the oldest entry past `max`. One map operation for
 * a known key (for maps set on every reply): the order is of first use, not last, and a busy
 * key forgotten is set again by its next use.
 */
export function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) forgetOldest(map);
}

function forgetOldest(map: Map<string, unknown>): void {
  for (const oldest of map.keys()) {
    map.delete(oldest);
    break;
  }
}
