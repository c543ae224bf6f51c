import {
  LEASE_SCRIPT,
  type LuaScript,
  OUTCOME_SCRIPT,
  REPORT_SCRIPT,
  SYNC_SCRIPT,
  WITHDRAW_SCRIPT,
} from './scripts.js';

// The SHA1s are written out rather than computed, so the library needs no hashing code (a
// browser build has none); a test checks each against its script.

/** @internal */
export const REPORT: LuaScript = {
  text: REPORT_SCRIPT,
  sha: '684797eb2276a84c73c96097abcd83922e7dfaf2',
};
/** @internal */
export const WITHDRAW: LuaScript = {
  text: WITHDRAW_SCRIPT,
  sha: '07e98e617e0963ad22ff4426862a647a9eeb23b0',
};
/** @internal */
export const LEASE: LuaScript = {
  text: LEASE_SCRIPT,
  sha: '4c93e97380592177c274cf03a2dbe89cae74aca0',
};
/** @internal */
export const OUTCOME: LuaScript = {
  text: OUTCOME_SCRIPT,
  sha: 'de0f72edb3998b06b0ebfb3fed74c2554c840c8a',
};
/** @internal */
export const SYNC: LuaScript = {
  text: SYNC_SCRIPT,
  sha: '3a14a4e59ef74cc22b40c09b83e235124ea51396',
};
