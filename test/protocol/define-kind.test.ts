import { describe, expect, it } from 'vitest';
import { configSchema, defineKind } from '../../src/kinds/index.js';

class Valve {
  limit: number;
  disposed = false;
  constructor(options: { limit: number }) {
    this.limit = options.limit;
  }
  checkOptions(options: { limit: number }): void {
    if (options.limit < 1) throw new Error('limit below 1');
  }
  applyOptions(options: { limit: number }): void {
    this.limit = options.limit;
  }
  dispose(): void {
    this.disposed = true;
  }
  stats() {
    return { limit: this.limit };
  }
}

const definition = {
  name: 'valve',
  label: 'valve',
  section: 'valves',
  policy: Valve,
  resolve: (data: Record<string, unknown>) => ({ limit: data.limit as number }),
  config: { schema: configSchema([['limit', 'value']]) },
};

describe('defineKind', () => {
  it('fills in is, create, reconfigure, dispose and view from the policy class', () => {
    const kind = defineKind<Valve, { limit: number }>(definition);
    const valve = kind.create({ limit: 2 });
    expect(valve).toBeInstanceOf(Valve);
    expect(kind.is(valve)).toBe(true);
    expect(kind.is({ limit: 2 })).toBe(false);
    expect(() => kind.reconfigure(valve, { limit: 0 })).toThrow('limit below 1');
    const apply = kind.reconfigure(valve, { limit: 5 });
    expect(valve.limit).toBe(2);
    apply();
    expect(kind.view(valve)).toEqual({ stats: { limit: 5 } });
    kind.dispose(valve);
    expect(valve.disposed).toBe(true);
  });

  it('keeps what the definition gives instead of a default', () => {
    const kind = defineKind<Valve, { limit: number }>({
      ...definition,
      view: (v) => ({ state: 'open', stats: v.stats() }),
    });
    expect(kind.view(kind.create({ limit: 1 }))).toEqual({ state: 'open', stats: { limit: 1 } });
  });
});
