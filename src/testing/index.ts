/**
 * Test helpers for code that uses breakwater: a manual clock that advances without sleeping.
 * @packageDocumentation
 */
export { flushMicrotasks, ManualClock } from '../clock/ManualClock.js';
export { SharedManualClock, type SharedManualClockState } from './SharedManualClock.js';
