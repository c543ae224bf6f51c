/**
 * breakwater/workers: policies shared by the threads of one process through a
 * `SharedArrayBuffer`. Build a policy in one thread, hand its `state` to the others (posted or
 * as `workerData`), and build the same policy from it there: every thread then admits against
 * one limit. Nothing blocks a thread's event loop. Shared memory does not cross processes
 * (cluster, PM2): share state between processes through `breakwater/redis`.
 *
 * @module
 */

export {
  type ExitingThread,
  SharedBulkhead,
  type SharedBulkheadOptions,
  type SharedBulkheadState,
} from './SharedBulkhead.js';
export {
  SharedRateLimiter,
  type SharedRateLimiterOptions,
  type SharedRateLimiterState,
} from './SharedRateLimiter.js';
export type { SharedLocalOptions, SharedPolicyState } from './state.js';
