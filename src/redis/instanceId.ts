/**
 * @internal A fresh id for this process in shared Redis state. Never drawn from a `random`
 * option: a seeded source gives every process the same sequence, so ids would collide.
 */
export function freshInstanceId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID !== undefined) return c.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${(++made).toString(36)}`;
}

let made = 0;
