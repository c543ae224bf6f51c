/**
 * The GCRA decision as plain TypeScript, written from the formula (not from the Lua script):
 * the oracle the store's decisions are compared with. All values are integer microseconds.
 */
export interface ReferenceDecision {
  allowed: boolean;
  retryAfterUs: number;
  remaining: number;
  granted: number;
  aheadUs: number;
}

/** Per-key TAT state, as the store keeps it in Redis. */
export class ReferenceGcra {
  readonly tats = new Map<string, number>();

  decide(
    key: string,
    permits: number,
    intervalUs: number,
    burst: number,
    nowUs: number,
    lease?: number,
  ): ReferenceDecision {
    const stored = this.tats.get(key);
    const tat = stored === undefined || stored < nowUs ? nowUs : stored;
    const allowAt = tat + permits * intervalUs - burst * intervalUs;
    if (nowUs < allowAt) {
      return {
        allowed: false,
        retryAfterUs: allowAt - nowUs,
        remaining: remaining(nowUs, tat, intervalUs, burst),
        granted: 0,
        aheadUs: tat - nowUs,
      };
    }
    // With a lease, as many permits as are free, up to the lease and the backlog's room.
    const free = Math.floor((nowUs - (tat - burst * intervalUs)) / intervalUs);
    const room = permits + Math.floor((tat - nowUs) / intervalUs);
    const granted = lease === undefined ? permits : Math.max(permits, Math.min(lease, free, room));
    const newTat = tat + granted * intervalUs;
    this.tats.set(key, newTat);
    return {
      allowed: true,
      retryAfterUs: 0,
      remaining: remaining(nowUs, newTat, intervalUs, burst),
      granted,
      aheadUs: tat - nowUs,
    };
  }
}

function remaining(nowUs: number, tat: number, intervalUs: number, burst: number): number {
  return Math.max(0, Math.floor((nowUs - (tat - burst * intervalUs)) / intervalUs));
}
