import { OptionsError } from '../errors/OptionsError.js';
import { configSchema, type InstanceHealth } from '../protocol/kind.js';

/** The state of a Redis-backed policy whose store answers, and of one deciding locally. */
export const AVAILABLE = 'available';
export const FALLBACK = 'fallback';

/** What the descriptor parts below need of a Redis-backed policy. */
interface StoreBacked {
  readonly storeAvailable: boolean;
  stats(): object;
  dispose(): void;
}

/**
 * @internal The parts of the kind of a Redis-backed policy that only code can build (config
 * data cannot give a client): `inCode` says how to build and register one. Its state is
 * `available`, or `fallback` while it decides locally: degraded on `/health`, never a 503.
 */
export function codeOnlyRedisKind<P extends StoreBacked>(inCode: string) {
  const state = (policy: P): string => (policy.storeAvailable ? AVAILABLE : FALLBACK);
  return {
    resolve(): never {
      throw new OptionsError('client', undefined, inCode);
    },
    // Registered instances are never reconfigured from config data, and no other exists.
    reconfigure: () => () => {},
    dispose: (policy: P) => policy.dispose(),
    view: (policy: P) => ({ state: state(policy), stats: policy.stats() }),
    state,
    restState: AVAILABLE,
    health: (s: string): InstanceHealth => (s === AVAILABLE ? 'ok' : 'degraded'),
    config: {
      schema: configSchema([]),
      codeOnly: ['client'],
      check() {},
      missing: () => ({ option: 'client', message: `is required: ${inCode}` }),
    },
  };
}
