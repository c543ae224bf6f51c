import type { Clock } from '../clock/Clock.js';
import { systemClock } from '../clock/systemClock.js';
import { Bulkhead } from '../policies/bulkhead/Bulkhead.js';
import { CircuitBreaker } from '../policies/circuit-breaker/CircuitBreaker.js';
import { Fallback } from '../policies/fallback/Fallback.js';
import { RateLimiter } from '../policies/rate-limiter/RateLimiter.js';
import { Retry } from '../policies/retry/Retry.js';
import { Timeout } from '../policies/timeout/Timeout.js';
import { StepKind } from '../protocol/step.js';
import { NO_SLOT, type PipelineCore, type Step } from './Execution.js';
import { LatencySampler } from './LatencySampler.js';

/**
 * @internal What the executor knows of a pipeline's steps, decided once when it is built:
 * which times every call reads, whether a call may wait, settle early or need a signal of its
 * own, and each step's slots in the execution record. `waits`: some step may make a call wait.
 */
export function buildCore(steps: readonly Step[]): { core: PipelineCore; waits: boolean } {
  let needsStartTime = false;
  let needsEndTime = false;
  let deferred = false;
  let ownSignal = false;
  let waits = false;
  let sampleEvery = Number.POSITIVE_INFINITY;
  let clock: Clock = systemClock;
  for (const s of steps) {
    if ('clock' in s && s.clock !== systemClock && clock === systemClock) clock = s.clock;
    if (s.stepKind === StepKind.Gate && s.latencyEvery !== 0) {
      sampleEvery = Math.min(sampleEvery, s.latencyEvery);
    }
    if (s instanceof CircuitBreaker) {
      needsStartTime ||= s.needsDuration;
      needsEndTime ||= s.needsDuration;
    } else if (s instanceof Bulkhead) {
      needsStartTime ||= s.needsQueueTime;
      waits ||= s.mayWait;
    } else if (s instanceof RateLimiter) {
      waits ||= s.mayWait;
    } else if (s instanceof Timeout) {
      needsStartTime ||= s.needsStartTime;
      ownSignal = true;
      deferred ||= s.aggressive;
    } else if (s instanceof Retry) {
      needsStartTime ||= s.needsTime;
      waits = true;
    }
  }
  // Every call is timed when the clock is cheap to read (a manual clock in tests).
  if (clock.cheapNow === true && sampleEvery !== Number.POSITIVE_INFINITY) sampleEvery = 1;
  const sampler =
    needsEndTime || sampleEvery === Number.POSITIVE_INFINITY
      ? undefined
      : new LatencySampler(sampleEvery);
  const core: PipelineCore = {
    steps,
    kinds: Uint8Array.from(steps, (s) => s.stepKind),
    clock,
    needsStartTime,
    needsEndTime,
    sampler,
    pool: [],
    ...assignSlots(steps, needsEndTime || sampler !== undefined),
    deferred,
    ownSignal,
    listensToCaller: waits || ownSignal || deferred,
  };
  return { core, waits };
}

/** Gives each step that keeps a per-call number its slot in the execution record. */
function assignSlots(
  steps: readonly Step[],
  timed: boolean,
): Pick<PipelineCore, 'slotOf' | 'timeSlotOf' | 'startedSlot' | 'slotCount'> {
  let next = 0;
  const slotOf: number[] = [];
  const timeSlotOf: number[] = [];
  for (const s of steps) {
    const keeps =
      s instanceof CircuitBreaker ||
      s instanceof Timeout ||
      s instanceof Retry ||
      ((s instanceof Bulkhead || s instanceof RateLimiter) && s.mayWait);
    slotOf.push(keeps ? next++ : NO_SLOT);
    timeSlotOf.push(s instanceof Retry && s.needsTime ? next++ : NO_SLOT);
  }
  const startedSlot = timed ? next++ : NO_SLOT;
  return { slotOf, timeSlotOf, startedSlot, slotCount: next };
}

/** @internal A policy of this copy of the library that a pipeline can hold. */
export function isPolicy(p: unknown): p is Step {
  return (
    p instanceof CircuitBreaker ||
    p instanceof Bulkhead ||
    p instanceof RateLimiter ||
    p instanceof Retry ||
    p instanceof Timeout ||
    p instanceof Fallback
  );
}
