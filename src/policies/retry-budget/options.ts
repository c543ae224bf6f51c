import type { Clock } from '../../clock/Clock.js';
import { OptionsError } from '../../errors/OptionsError.js';
import type { DurationString } from '../../protocol/kind.js';
import {
  checkOptionsObject,
  duration,
  integer,
  numberIn,
  oneOf,
} from '../../validation/validate.js';
import { NAMED_KEYS, type ResolvedNamed, resolveNamed } from '../shared/commonOptions.js';

/**
 * How a {@link RetryBudget} decides:
 *
 * - `window` (Finagle, Linkerd): extra attempts are a share (`ratio`) of the calls started over
 *   a sliding `window`, plus a reserve of `minRetriesPerSecond` for low traffic;
 * - `tokens` (gRPC retry throttling): a failed attempt costs a token, a successful one earns
 *   `tokenRatio`; extra attempts only while more than half of `maxTokens` are left;
 * - `concurrency` (Envoy, failsafe-go): extra attempts in progress at most `ratio` of the calls
 *   in progress, and at least `minRetryConcurrency`.
 */
export type RetryBudgetModel = 'window' | 'tokens' | 'concurrency';

/**
 * Options of a {@link RetryBudget}. Each model takes only its own options (an OptionsError
 * names the model an option belongs to).
 */
export interface RetryBudgetOptions {
  /** See {@link RetryBudgetModel}. @default "window" */
  readonly model?: RetryBudgetModel;
  /**
   * `window`: how long a started call counts towards the share, and a retry against it, in
   * [1 s, 60 s]. @default 10000 (10 s)
   */
  readonly window?: number | DurationString;
  /**
   * `window`: extra attempts allowed per call started within the window (0.2: one retry per
   * five calls), in [0, 1000]. `concurrency`: extra attempts in progress allowed per call in
   * progress, in [0, 1000]. @default 0.2
   */
  readonly ratio?: number;
  /**
   * `window`: extra attempts always allowed per second whatever the traffic, beyond the share
   * (a reserve that refills continuously and holds at most one second's worth), in [0, 10^6].
   * `ratio` and this cannot both be 0. @default 10
   */
  readonly minRetriesPerSecond?: number;
  /**
   * `tokens`: the tokens the budget holds, and starts with, in [0.001, 1000] (kept to three
   * decimals); extra attempts are allowed only while more than half are left. @default 10
   */
  readonly maxTokens?: number;
  /**
   * `tokens`: the tokens a successful attempt earns back (a failed one costs 1), in
   * [0.001, 1000], kept to three decimals as gRPC does. @default 0.1
   */
  readonly tokenRatio?: number;
  /**
   * `concurrency`: extra attempts in progress always allowed whatever the traffic, an integer
   * in [0, 10^6]. `ratio` and this cannot both be 0. @default 3
   */
  readonly minRetryConcurrency?: number;
  /** Name used in events, snapshots and metrics. @default "retryBudget" */
  readonly name?: string;
  /** The clock the window is measured on. @default the system clock */
  readonly clock?: Clock;
}

/** Defaults of {@link RetryBudgetOptions}. */
export const retryBudgetDefaults = Object.freeze({
  model: 'window' as RetryBudgetModel,
  window: 10_000,
  ratio: 0.2,
  minRetriesPerSecond: 10,
  maxTokens: 10,
  tokenRatio: 0.1,
  minRetryConcurrency: 3,
  name: 'retryBudget',
});

/** The options after defaults and checks, as the policy keeps them; not exported by name. */
export interface ResolvedRetryBudgetOptions extends ResolvedNamed {
  model: RetryBudgetModel;
  window: number;
  ratio: number;
  minRetriesPerSecond: number;
  maxTokens: number;
  tokenRatio: number;
  minRetryConcurrency: number;
}

/** The options that apply to some models only. */
const MODEL_KEYS = [
  'window',
  'ratio',
  'minRetriesPerSecond',
  'maxTokens',
  'tokenRatio',
  'minRetryConcurrency',
];
const KEYS = ['model', ...MODEL_KEYS, ...NAMED_KEYS];

/** @internal The options each model takes besides `model`, `name` and `clock`. */
export const MODEL_OPTIONS: ReadonlyMap<RetryBudgetModel, readonly string[]> = new Map([
  ['window', ['window', 'ratio', 'minRetriesPerSecond']],
  ['tokens', ['maxTokens', 'tokenRatio']],
  ['concurrency', ['ratio', 'minRetryConcurrency']],
] as const);

/** @internal */
export function resolveRetryBudgetOptions(
  options: RetryBudgetOptions | undefined,
): ResolvedRetryBudgetOptions {
  const o = checkOptionsObject(options, KEYS, '');
  const d = retryBudgetDefaults;
  const model = oneOf(o.model, 'model', d.model, ['window', 'tokens', 'concurrency']);
  const own = MODEL_OPTIONS.get(model)!;
  for (const key of MODEL_KEYS) {
    if (o[key] !== undefined && !own.includes(key)) {
      const models = [...MODEL_OPTIONS]
        .filter(([, keys]) => keys.includes(key))
        .map(([m]) => `"${m}"`);
      throw new OptionsError(
        key,
        o[key],
        `undefined: it applies to the ${models.join(' and ')} model${models.length > 1 ? 's' : ''}, not to "${model}"`,
      );
    }
  }
  const ratio = numberIn(o.ratio, 'ratio', d.ratio, 0, 1000);
  const minRetriesPerSecond = numberIn(
    o.minRetriesPerSecond,
    'minRetriesPerSecond',
    d.minRetriesPerSecond,
    0,
    1_000_000,
  );
  const minRetryConcurrency = integer(
    o.minRetryConcurrency,
    'minRetryConcurrency',
    d.minRetryConcurrency,
    0,
    1_000_000,
  );
  if (ratio === 0) {
    if (model === 'window' && minRetriesPerSecond === 0) {
      throw new OptionsError(
        'ratio',
        ratio,
        'a number in (0, 1000] when `minRetriesPerSecond` is 0 (with both 0 the budget never allows a retry)',
      );
    }
    if (model === 'concurrency' && minRetryConcurrency === 0) {
      throw new OptionsError(
        'ratio',
        ratio,
        'a number in (0, 1000] when `minRetryConcurrency` is 0 (with both 0 the budget never allows a retry)',
      );
    }
  }
  const maxTokens = numberIn(o.maxTokens, 'maxTokens', d.maxTokens, 0.001, 1000);
  const tokenRatio = numberIn(o.tokenRatio, 'tokenRatio', d.tokenRatio, 0.001, 1000);
  return {
    model,
    window: duration(o.window, 'window', d.window, 1000, false, 60_000),
    ratio,
    minRetriesPerSecond,
    maxTokens,
    tokenRatio,
    minRetryConcurrency,
    ...resolveNamed(o, d.name),
  };
}
