/**
 * How much a call matters when load must be shed, highest first: Google SRE's criticality
 * levels. A load shedder refuses `sheddable` calls first, then `sheddable-plus`, then
 * `critical`, and `critical-plus` last. Calls are `critical` unless they say otherwise.
 */
export type Criticality = 'critical-plus' | 'critical' | 'sheddable-plus' | 'sheddable';

/** @internal The levels by number, the first shed first: a call's level is its index. */
export const CRITICALITY_LEVELS: readonly Criticality[] = Object.freeze([
  'sheddable',
  'sheddable-plus',
  'critical',
  'critical-plus',
]);

/** @internal The level of a call that gives none: `critical`. */
export const DEFAULT_LEVEL = 2;

/** @internal The level of `criticality`, or -1 when it is none of the four. */
export function criticalityLevel(criticality: unknown): number {
  return CRITICALITY_LEVELS.indexOf(criticality as Criticality);
}
