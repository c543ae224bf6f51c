/**
 * @internal The codes of the errors that belong to no one policy kind: bad options and config
 * data, misuse, a call's own timeout, and a shared store that does not answer. Each kind's
 * refusal error owns its code in its folder; the public `ErrorCode` gathers them all
 * (`policies/kinds.ts`), and only a program that reads it pays for every code.
 */
export const coreCodes = {
  StoreTimeout: 'ERR_BREAKWATER_STORE_TIMEOUT',
  StoreUnavailable: 'ERR_BREAKWATER_STORE_UNAVAILABLE',
  InvalidOption: 'ERR_BREAKWATER_INVALID_OPTION',
  InvalidConfig: 'ERR_BREAKWATER_INVALID_CONFIG',
  Usage: 'ERR_BREAKWATER_USAGE',
} as const;

/** @internal The code of a passed deadline: a timeout policy's, or a call's own `timeout`. */
export const timeoutCodes = { Timeout: 'ERR_BREAKWATER_TIMEOUT' } as const;

/**
 * One of the stable codes carried by every error breakwater throws (the values of
 * `ErrorCode`); safe to match on in logs and code. A type only: it costs no bytes.
 */
export type ErrorCode =
  | 'ERR_BREAKWATER_CIRCUIT_OPEN'
  | 'ERR_BREAKWATER_CIRCUIT_ISOLATED'
  | 'ERR_BREAKWATER_BULKHEAD_FULL'
  | 'ERR_BREAKWATER_RATE_LIMITED'
  | 'ERR_BREAKWATER_LOAD_SHED'
  | 'ERR_BREAKWATER_CONCURRENCY_LIMIT'
  | 'ERR_BREAKWATER_DEADLINE_TOO_SHORT'
  | 'ERR_BREAKWATER_RETRY_EXHAUSTED'
  | 'ERR_BREAKWATER_CHAOS_FAULT'
  | 'ERR_BREAKWATER_TIMEOUT'
  | 'ERR_BREAKWATER_STORE_TIMEOUT'
  | 'ERR_BREAKWATER_STORE_UNAVAILABLE'
  | 'ERR_BREAKWATER_INVALID_OPTION'
  | 'ERR_BREAKWATER_INVALID_CONFIG'
  | 'ERR_BREAKWATER_USAGE';
