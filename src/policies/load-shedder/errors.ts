import { nameErrorClass } from '../../errors/BreakwaterError.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';
import type { Criticality } from '../../protocol/criticality.js';

/** The stable codes of this kind's errors (also in `ErrorCode`). */
export const loadShedderCodes = {
  LoadShed: 'ERR_BREAKWATER_LOAD_SHED',
} as const;

/**
 * Why a load shedder refused a call: the dependency accepted too few of the recent requests
 * (`'accepts'`, the formula), or the process's own load signal asked for more refusals than the
 * formula (`'signal'`, e.g. `eventLoopLoad()` finding the event loop late or busy).
 */
export type LoadShedReason = 'accepts' | 'signal';

/**
 * A load shedder refused the call without making it. A refusal that never reached the
 * dependency: breakers do not count it and retries do not retry it.
 *
 * Unless the shedder has `debug: true`, one error object per criticality and reason serves
 * every refusal of a shedder, so it carries nothing particular to one call: `probability` is
 * NaN, and the refusal's probability (and the load signal's reading) come with its `onShed`
 * event. With `debug: true`, each refusal gets a fresh error that carries them.
 */
export class LoadShedError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [loadShedderCodes.LoadShed];
  /** The criticality of the refused call. */
  readonly criticality: Criticality;
  /** Why it was refused. */
  readonly reason: LoadShedReason;
  /**
   * With `debug: true`, the probability with which calls of that criticality were refused then;
   * NaN otherwise (the `onShed` event carries it).
   */
  readonly probability: number;

  /** `reading`: what the load signal read, for a debug error's message. */
  constructor(
    policyName: string,
    criticality: Criticality,
    reason: LoadShedReason,
    probability = Number.NaN,
    reading?: string,
  ) {
    super(
      loadShedderCodes.LoadShed,
      `Load shedder "${policyName}" refused the call: ${
        reason === 'accepts'
          ? 'too few recent requests were accepted'
          : `its load signal reports this process overloaded${reading ? ` (${reading})` : ''}`
      }`,
      'loadShedder',
      policyName,
    );
    this.criticality = criticality;
    this.reason = reason;
    this.probability = probability;
  }
}

nameErrorClass(LoadShedError, 'LoadShedError');

/** True when `error` is a {@link LoadShedError} from any copy of breakwater. */
export function isLoadShedError(error: unknown): error is LoadShedError {
  return error instanceof LoadShedError;
}
