import type { AnyPolicyKind } from '../protocol/kind.js';
import { bulkheadKind } from './bulkhead/kind.js';
import { circuitBreakerKind } from './circuit-breaker/kind.js';
import { rateLimiterKind } from './rate-limiter/kind.js';
import { retryKind } from './retry/kind.js';
import { timeoutKind } from './timeout/kind.js';

/**
 * The library's policy kinds, in the order snapshots, listings and metrics report them. The
 * registry, config data, decorators, metric collection, the Prometheus and OpenTelemetry
 * exporters and the dashboard read this list (and a registry's own `kinds`); nothing else
 * names a kind.
 */
export const POLICY_KINDS: readonly AnyPolicyKind[] = [
  circuitBreakerKind,
  retryKind,
  timeoutKind,
  bulkheadKind,
  rateLimiterKind,
];
