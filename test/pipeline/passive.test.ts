import { describe, expect, it } from 'vitest';
import { bulkhead, pipeline } from '../../src/index.js';

describe('a pipeline planning its calls', () => {
  it('keeps a gate whose own `passive` member is no method, and runs its calls through it', async () => {
    const gate = Object.assign(bulkhead(1), { passive: true });
    const p = pipeline(gate);
    let release!: () => void;
    const first = p.execute(() => new Promise<void>((r) => (release = r)));
    const second = await p.tryExecute(() => 'second');
    expect(second.ok).toBe(false);
    release();
    await first;
    expect(await p.execute(() => 'third')).toBe('third');
  });
});
