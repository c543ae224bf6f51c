export { sharedSignalsKind } from './kind.js';
export { sharedSignalsFamilies } from './metrics.js';
export { type SharedQuorum, type SharedSignalsOptions, sharedSignalsDefaults } from './options.js';
export {
  RedisBreakerSignals,
  type SharedSignalsStats,
  sharedSignals,
} from './RedisBreakerSignals.js';
export * from './scripts.js';
