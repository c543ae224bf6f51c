import type { Criticality } from '../../protocol/criticality.js';
import type { LoadShedReason } from './errors.js';

/** Emitted when the load shedder refuses a call. */
export interface LoadShedEvent {
  /** The criticality of the refused call. */
  readonly criticality: Criticality;
  /** The probability with which calls of that criticality are refused now. */
  readonly probability: number;
  /** The share of all calls it refuses now. */
  readonly refusalRate: number;
  /** Why: the formula over recent accepts, or the process's load signal. */
  readonly reason: LoadShedReason;
  /**
   * With reason `'signal'`, what the signal read, when it says (`eventLoopLoad()` does: "the
   * event loop ran 426 ms late (maxLag 100 ms)").
   */
  readonly reading?: string;
}
