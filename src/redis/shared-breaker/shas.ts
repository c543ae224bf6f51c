import {
  LEASE_SCRIPT,
  type LuaScript,
  OUTCOME_SCRIPT,
  REPORT_SCRIPT,
  SYNC_SCRIPT,
  WITHDRAW_SCRIPT,
} from './scripts.js';

const script = (text: string, sha: string): LuaScript => ({ text, sha });

// The SHA1s are written out rather than computed, so the library needs no hashing code (a
// browser build has none); a test checks each against its script.

/** @internal */
export const REPORT = script(REPORT_SCRIPT, '1185bc1a1551921e63f3f44455ad519de628dcad');
/** @internal */
export const WITHDRAW = script(WITHDRAW_SCRIPT, '07e98e617e0963ad22ff4426862a647a9eeb23b0');
/** @internal */
export const LEASE = script(LEASE_SCRIPT, '4c93e97380592177c274cf03a2dbe89cae74aca0');
/** @internal */
export const OUTCOME = script(OUTCOME_SCRIPT, 'f50f2c850e957216fd3863bfc455a13ae1c2e4cb');
/** @internal */
export const SYNC = script(SYNC_SCRIPT, 'fedff42b0b27df8de4207ce734317de254296286');
