/**
 * breakwater: circuit breakers, retries, timeouts, bulkheads and fallbacks, composed into one
 * flat pipeline with a per-call cost close to a bare call.
 * @packageDocumentation
 */

export type { Clock, TimerHandle } from './clock/Clock.js';
export { systemClock } from './clock/systemClock.js';
export { BreakwaterError } from './errors/BreakwaterError.js';
export { OptionsError, UsageError } from './errors/OptionsError.js';
export {
  isPolicyRejection,
  type PolicyKind,
  PolicyRejectedError,
} from './errors/PolicyRejectedError.js';
export { type Disposer, setListenerErrorHandler } from './events/Listeners.js';
export { collectMetrics } from './exporters/collect.js';
export { prometheusText } from './exporters/exposition.js';
export type * from './exporters/families.js';
export {
  type LogTransitionsOptions,
  logTransitions,
  type TransitionLogContext,
  type TransitionLogger,
} from './exporters/logTransitions.js';
export type { ExecuteOptions, ExecutionContext } from './pipeline/context.js';
export { type KeyedExecuteOptions, KeyedPipeline } from './pipeline/KeyedPipeline.js';
export { KeyedStep } from './pipeline/KeyedStep.js';
export { Pipeline, type Policy, pipeline } from './pipeline/Pipeline.js';
export type { ExecutionResult } from './pipeline/result.js';
export {
  AdaptiveLimit,
  type AdaptiveLimitStats,
  type PartitionStats,
} from './policies/adaptive-limit/AdaptiveLimit.js';
export type {
  LimitChangeReason,
  LimitDecision,
  LimitFunction,
  LimitWindow,
} from './policies/adaptive-limit/algorithms.js';
export type {
  AdaptiveAlgorithmConfig,
  AdaptiveLimitConfig,
} from './policies/adaptive-limit/config.js';
export {
  type AdaptiveLimitRejection,
  ConcurrencyLimitError,
  isConcurrencyLimitError,
} from './policies/adaptive-limit/errors.js';
export type {
  AdaptiveLimitRejectedEvent,
  LimitChangeEvent,
} from './policies/adaptive-limit/events.js';
export { adaptiveLimitKind } from './policies/adaptive-limit/kind.js';
export {
  type AdaptiveAlgorithmName,
  type AdaptiveLimitOptions,
  type AimdOptions,
  adaptiveLimitDefaults,
  type GradientOptions,
  type VegasOptions,
} from './policies/adaptive-limit/options.js';
export { Bulkhead, type BulkheadStats } from './policies/bulkhead/Bulkhead.js';
export type { BulkheadConfig } from './policies/bulkhead/config.js';
export {
  BulkheadRejectedError,
  type BulkheadRejection,
  isBulkheadRejectedError,
} from './policies/bulkhead/errors.js';
export type { BulkheadRejectedEvent } from './policies/bulkhead/events.js';
// The policy kinds (what a kind defined outside the library implements: breakwater/kinds).
export { bulkheadKind } from './policies/bulkhead/kind.js';
export {
  type BulkheadOptions,
  type BulkheadQueue,
  bulkheadDefaults,
} from './policies/bulkhead/options.js';
export { Chaos, type ChaosStats } from './policies/chaos/Chaos.js';
export type { ChaosConfig } from './policies/chaos/config.js';
export { ChaosFaultError, isInjectedFault } from './policies/chaos/errors.js';
export type { ChaosInjectionEvent } from './policies/chaos/events.js';
export { chaosKind } from './policies/chaos/kind.js';
export {
  type ChaosBehaviorOptions,
  type ChaosCall,
  type ChaosCommonOptions,
  type ChaosFaultOptions,
  type ChaosLatencyOptions,
  type ChaosOptions,
  type ChaosOutcomeOptions,
  type ChaosStrategy,
  chaosDefaults,
} from './policies/chaos/options.js';
export { CircuitBreaker } from './policies/circuit-breaker/CircuitBreaker.js';
export type { CircuitBreakerConfig, WindowConfig } from './policies/circuit-breaker/config.js';
export {
  BrokenCircuitError,
  IsolatedCircuitError,
  isBrokenCircuitError,
} from './policies/circuit-breaker/errors.js';
export type {
  CallOutcomeEvent,
  RejectedEvent as CircuitRejectedEvent,
  StateChangeEvent,
  TransitionReason,
} from './policies/circuit-breaker/events.js';
export { circuitBreakerKind } from './policies/circuit-breaker/kind.js';
export {
  type BreakBackoffOptions,
  type CircuitBreakerOptions,
  type ConsecutiveWindowOptions,
  type CountWindowOptions,
  circuitBreakerDefaults,
  type HalfOpenOptions,
  type TimeWindowOptions,
  type WindowOptions,
} from './policies/circuit-breaker/options.js';
export type { CircuitBreakerSnapshot } from './policies/circuit-breaker/snapshot.js';
export { CircuitState } from './policies/circuit-breaker/state.js';
export type { CircuitBreakerStats } from './policies/circuit-breaker/stats.js';
export { Coalescer, type CoalesceStats } from './policies/coalesce/Coalescer.js';
export type { CoalesceConfig } from './policies/coalesce/config.js';
export type { CoalesceAbandonedEvent } from './policies/coalesce/events.js';
export { coalesceKind } from './policies/coalesce/kind.js';
export { type CoalesceOptions, coalesceDefaults } from './policies/coalesce/options.js';
export {
  adaptiveLimit,
  bulkhead,
  chaos,
  circuitBreaker,
  coalesce,
  fallback,
  hedge,
  loadShedder,
  rateLimiter,
  retry,
  retryBudget,
  timeout,
} from './policies/factories.js';
export type { FallbackEvent } from './policies/fallback/events.js';
export { Fallback } from './policies/fallback/Fallback.js';
export type { Failure as FallbackFailure, FallbackOptions } from './policies/fallback/options.js';
export type { HedgeConfig } from './policies/hedge/config.js';
export type { HedgeEvent, HedgeReason, HedgeRefusedEvent } from './policies/hedge/events.js';
export { Hedge, type HedgeStats } from './policies/hedge/Hedge.js';
export { hedgeKind } from './policies/hedge/kind.js';
export {
  type HedgeDelay,
  type HedgeDelayContext,
  type HedgeOptions,
  type HedgePercentileDelay,
  hedgeDefaults,
  MAX_HEDGES,
} from './policies/hedge/options.js';
export {
  diagnosticsChannels,
  ErrorCode,
  POLICY_KINDS,
  type PolicyKindConfigs,
  type RegistryInstanceSnapshot,
  type RegistryTransition,
} from './policies/kinds.js';
export type { LoadShedderConfig } from './policies/load-shedder/config.js';
export { isLoadShedError, LoadShedError } from './policies/load-shedder/errors.js';
export {
  type EventLoopLoadOptions,
  type EventLoopSample,
  eventLoopLoad,
  eventLoopLoadDefaults,
  type LoadSignal,
} from './policies/load-shedder/eventLoopLoad.js';
export type { LoadShedEvent } from './policies/load-shedder/events.js';
export { loadShedderKind } from './policies/load-shedder/kind.js';
export { LoadShedder, type LoadShedderStats } from './policies/load-shedder/LoadShedder.js';
export { type LoadShedderOptions, loadShedderDefaults } from './policies/load-shedder/options.js';
export { PipelineBuilder } from './policies/PipelineBuilder.js';
export type { RateLimiterConfig } from './policies/rate-limiter/config.js';
export type { RateLimitDecision } from './policies/rate-limiter/decision.js';
export { isRateLimitedError, RateLimitedError } from './policies/rate-limiter/errors.js';
export type { RateLimitedEvent } from './policies/rate-limiter/events.js';
export {
  KeyedRateLimiter,
  type KeyedRateLimiterOptions,
  keyedRateLimiterDefaults,
} from './policies/rate-limiter/KeyedRateLimiter.js';
export { rateLimiterKind } from './policies/rate-limiter/kind.js';
export {
  type RateLimiterOptions,
  rateLimiterDefaults,
} from './policies/rate-limiter/options.js';
export { type AcquireOptions, RateLimiter } from './policies/rate-limiter/RateLimiter.js';
export type { RateLimiterStats } from './policies/rate-limiter/stats.js';
export type { RetryConfig } from './policies/retry/config.js';
export {
  type ExhaustedReason,
  isRetryExhaustedError,
  RetryExhaustedError,
} from './policies/retry/errors.js';
export type { GiveUpEvent, RetryEvent } from './policies/retry/events.js';
export { retryKind } from './policies/retry/kind.js';
export {
  type AttemptFailure,
  type BackoffKind,
  type JitterKind,
  type LastResult,
  type RetryOptions,
  retryDefaults,
} from './policies/retry/options.js';
export { Retry, type RetryStats } from './policies/retry/Retry.js';
export type { RetryBudgetConfig } from './policies/retry-budget/config.js';
export type { BudgetExhaustedEvent } from './policies/retry-budget/events.js';
export { retryBudgetKind } from './policies/retry-budget/kind.js';
export {
  type RetryBudgetModel,
  type RetryBudgetOptions,
  retryBudgetDefaults,
} from './policies/retry-budget/options.js';
export { RetryBudget, type RetryBudgetStats } from './policies/retry-budget/RetryBudget.js';
export type { Pushback } from './policies/shared/pushback.js';
export type { QueueDiscipline } from './policies/shared/WaitQueue.js';
export type { TimeoutConfig } from './policies/timeout/config.js';
export { isTimeoutError, TimeoutError } from './policies/timeout/errors.js';
export type { TimeoutEvent } from './policies/timeout/events.js';
export { timeoutKind } from './policies/timeout/kind.js';
export {
  type TimeoutOptions,
  type TimeoutStrategy,
  timeoutDefaults,
} from './policies/timeout/options.js';
export { Timeout, type TimeoutStats } from './policies/timeout/Timeout.js';
export type { AttemptBudget } from './protocol/budget.js';
export type { Criticality } from './protocol/criticality.js';
export type { Duration, DurationString, DurationUnit } from './protocol/kind.js';
export { ConfigError, type ConfigIssue } from './registry/ConfigError.js';
export {
  type KeysConfig,
  keysDefaults,
  type RegistryConfig,
} from './registry/config/types.js';
export { parseDuration } from './registry/duration.js';
export {
  defaultRegistry,
  type KeyedStepOptions,
  Registry,
  type RegistryOptions,
} from './registry/Registry.js';
export type { RegistrySnapshot } from './registry/snapshot.js';
export type { LatencySnapshot, RecentLatencySnapshot } from './telemetry/LatencyHistogram.js';
export type { MetricsOptions } from './telemetry/metrics.js';
export { VERSION } from './version.js';
