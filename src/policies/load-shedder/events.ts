import type { Criticality } from '../../protocol/criticality.js';

/** Emitted when the load shedder refuses a call. */
export interface LoadShedEvent {
  /** The criticality of the refused call. */
  readonly criticality: Criticality;
  /** The probability with which calls of that criticality are refused now. */
  readonly probability: number;
  /** The share of all calls it refuses now. */
  readonly refusalRate: number;
}
