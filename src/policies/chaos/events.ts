import type { Criticality } from '../../protocol/criticality.js';
import type { ChaosStrategy } from './options.js';

/** Emitted when a chaos step injects into a call. */
export interface ChaosInjectionEvent {
  readonly strategy: ChaosStrategy;
  /** The criticality of the call injected into. */
  readonly criticality: Criticality;
  /** With strategy `fault`, the error the call fails with. */
  readonly error?: Error;
  /** With strategy `latency`, the delay in ms. */
  readonly latency?: number;
  /** Injections active at once, this one included. */
  readonly active: number;
}
