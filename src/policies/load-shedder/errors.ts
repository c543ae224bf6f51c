import { ErrorCode } from '../../errors/codes.js';
import { PolicyRejectedError } from '../../errors/PolicyRejectedError.js';
import type { Criticality } from '../../protocol/criticality.js';

/**
 * A load shedder refused the call without making it: the dependency has been accepting too few
 * of the recent requests. A refusal that never reached the dependency: breakers do not count it
 * and retries do not retry it.
 */
export class LoadShedError extends PolicyRejectedError {
  static override readonly codes: readonly string[] = [ErrorCode.LoadShed];
  /** The criticality of the refused call. */
  criticality: Criticality;
  /** The probability with which calls of that criticality were refused then. */
  probability: number;

  /** @internal */
  constructor(policyName: string, criticality: Criticality, probability: number) {
    super(
      ErrorCode.LoadShed,
      `Load shedder "${policyName}" refused the call: too few recent requests were accepted`,
      'loadShedder',
      policyName,
    );
    this.criticality = criticality;
    this.probability = probability;
  }
}

Object.defineProperty(LoadShedError.prototype, 'name', { value: 'LoadShedError', writable: true });

/** True when `error` is a {@link LoadShedError} from any copy of breakwater. */
export function isLoadShedError(error: unknown): error is LoadShedError {
  return error instanceof LoadShedError;
}
