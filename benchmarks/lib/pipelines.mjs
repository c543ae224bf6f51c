/**
 * breakwater's side of every scenario, configured like the peers (see peers.mjs): shared by a
 * scenario and its polluted variant so both measure the same thing. The report prints the
 * source of these factories next to the peers' ones. Option values stay literal for that.
 */
import {
  bulkhead,
  CircuitBreaker,
  circuitBreaker,
  decorators,
  hedge,
  pipeline,
  Registry,
  retry,
  retryBudget,
  timeout,
} from './breakwater.mjs';

/** True when the measured build has `breakwater/decorators`. */
export const hasDecorators = decorators !== undefined;

/** A closed breaker: 5 consecutive failures open it for 10 s. */
export const breakerPipeline = () =>
  pipeline(
    circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 }),
  );

/** 4 attempts in all (3 retries, as cockatiel's `maxAttempts: 3` and p-retry's `retries: 3`). */
export const retryPipeline = () =>
  pipeline(retry({ maxAttempts: 4, backoff: 'exponential', delay: 100, multiplier: 2 }));

/** True when the measured build has retry budgets. */
export const hasRetryBudget = retryBudget !== undefined;

/** The retry of {@link retryPipeline} spending from a retry budget of the default model. */
export const budgetedRetryPipeline = () =>
  pipeline(
    retry({
      maxAttempts: 4,
      backoff: 'exponential',
      delay: 100,
      multiplier: 2,
      budget: retryBudget({ window: 10_000, ratio: 0.2, minRetriesPerSecond: 10 }),
    }),
  );

export const timeoutPipeline = (strategy) => pipeline(timeout({ timeout: 1000, strategy }));

export const bulkheadPipeline = () => pipeline(bulkhead({ maxConcurrent: 100, maxQueue: 0 }));

/** One hedge after 2 s (Polly's default delay): the first attempt answers long before. */
export const hedgePipeline = () => pipeline(hedge({ maxHedges: 1, delay: 2000 }));

/** retry -> breaker -> timeout (cooperative) -> bulkhead, outer to inner. */
export const composedPipeline = () =>
  pipeline(
    retry({ maxAttempts: 4, backoff: 'exponential', delay: 100, multiplier: 2 }),
    circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 }),
    timeout({ timeout: 1000, strategy: 'cooperative' }),
    bulkhead({ maxConcurrent: 100, maxQueue: 0 }),
  );

/**
 * Applies method decorators (outermost first) to `Class.prototype[name]` as compiled TC39
 * decorators do: the method is replaced by what each decorator returns, innermost first.
 */
function decorate(Class, name, list) {
  let method = Class.prototype[name];
  for (const d of [...list].reverse()) {
    method = d(method, {
      kind: 'method',
      name,
      static: false,
      private: false,
      addInitializer() {},
    });
  }
  Class.prototype[name] = method;
}

/**
 * The composed policies as method decorators, on an async method that returns 1 like the
 * target of the pipeline rows: `@retry @circuitBreaker @timeout @bulkhead async call()`.
 */
export const composedDecoratedClass = ({ retry, circuitBreaker, timeout, bulkhead }) => {
  class Service {
    async call() {
      return 1;
    }
  }
  decorate(Service, 'call', [
    retry({ maxAttempts: 4, backoff: 'exponential', delay: 100, multiplier: 2 }),
    circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 }),
    timeout({ timeout: 1000, strategy: 'cooperative' }),
    bulkhead({ maxConcurrent: 100, maxQueue: 0 }),
  ]);
  return Service;
};

/**
 * The closed breaker of {@link breakerPipeline} as a method decorator on an async method that
 * returns 1: `@circuitBreaker async call()`.
 */
export const breakerDecoratedClass = ({ circuitBreaker }) => {
  class Service {
    async call() {
      return 1;
    }
  }
  decorate(Service, 'call', [
    circuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 }),
  ]);
  return Service;
};

/**
 * The same async method with no decorator, for the rows that call a pipeline directly with a
 * closure per call, as code without decorators does: `p.execute(() => service.call())`.
 */
export class PlainService {
  async call() {
    return 1;
  }
}

// A program defines a class once and makes instances of it. A class made again for each row
// would give the rows' shared call sites (`service.call()` in a scenario's op) one class more
// to tell apart each time, which no single call site of a service sees.
let composedClass;
let breakerClass;

/** An instance of the decorated class of {@link composedDecoratedClass}, made once per process. */
export const decoratedService = () => {
  composedClass ??= composedDecoratedClass(decorators);
  return new composedClass();
};

/** An instance of the decorated class of {@link breakerDecoratedClass}, made once per process. */
export const decoratedBreakerService = () => {
  breakerClass ??= breakerDecoratedClass(decorators);
  return new breakerClass();
};

export const plainService = () => new PlainService();

/**
 * A registry whose keyed names keep at most `maxKeys` keys (the least recently used is evicted
 * to make room); no key idles out during a run. Every key gets its own breaker with the
 * default options (a count window of 100 calls).
 */
export const keyedRegistry = (maxKeys) => new Registry({ keys: { maxKeys, idleTimeout: '1h' } });

/** One successful call through the breaker of `key`, as a caller would make it. */
export const keyedCall = (registry, key) =>
  pipeline(registry.keyedCircuitBreaker('api', key)).executeSync(() => 1);

/**
 * A registry whose keyed breakers of name `api` are configured like {@link breakerPipeline}'s
 * breaker (5 consecutive failures open it for 10 s), holding at most `maxKeys` keys (the
 * registry's default).
 */
export const keyedBreakerRegistry = (maxKeys = 100_000) =>
  new Registry({
    keys: { maxKeys },
    circuitBreakers: {
      api: { window: { kind: 'consecutive', threshold: 5 }, breakDuration: '10s' },
    },
  });

/** A pipeline whose breaker is the registry's of each call's key: `execute(fn, { key })`. */
export const keyedPipeline = (registry) => pipeline(registry.keyed('circuitBreaker', 'api'));

/** What code without keyed steps writes: a pipeline per call around the key's breaker. */
export const pipelinePerCall = (registry, key) =>
  pipeline(registry.keyedCircuitBreaker('api', key));

/**
 * An open breaker: held open by hand (`forceOpen`) or tripped (`trip`, as 5 failures would)
 * with a break that outlasts the run, so each call must check the clock.
 */
export const openPipeline = (how) => {
  const breaker = circuitBreaker({
    window: { kind: 'consecutive', threshold: 5 },
    breakDuration: 2_147_483_647,
  });
  if (how === 'forceOpen') breaker.forceOpen();
  else breaker.trip();
  return pipeline(breaker);
};

/** One breaker instance, configured like the pipelines' breakers. */
export const newBreaker = () =>
  new CircuitBreaker({ window: { kind: 'consecutive', threshold: 5 }, breakDuration: 10_000 });

/** One breaker instance with every option at its default (count window of 100 calls). */
export const newDefaultBreaker = () => new CircuitBreaker();

const src = (f) => f.toString().replace(/\s+/g, ' ');

export function breakwaterConfigs() {
  return [
    { library: 'breakwater', use: 'circuit breaker', source: src(breakerPipeline) },
    { library: 'breakwater', use: 'open breaker', source: src(openPipeline) },
    { library: 'breakwater', use: 'retry', source: src(retryPipeline) },
    ...(hasRetryBudget
      ? [{ library: 'breakwater', use: 'retry with a budget', source: src(budgetedRetryPipeline) }]
      : []),
    { library: 'breakwater', use: 'timeout', source: src(timeoutPipeline) },
    { library: 'breakwater', use: 'bulkhead', source: src(bulkheadPipeline) },
    { library: 'breakwater', use: 'composed', source: src(composedPipeline) },
    ...(hasDecorators
      ? [
          {
            library: 'breakwater',
            use: 'composed, decorators',
            source: src(composedDecoratedClass),
          },
          {
            library: 'breakwater',
            use: 'circuit breaker, decorator',
            source: src(breakerDecoratedClass),
          },
        ]
      : []),
    {
      library: 'breakwater',
      use: 'undecorated method (pipeline called directly)',
      source: src(PlainService),
    },
    { library: 'breakwater', use: 'breaker instances', source: src(newBreaker) },
    { library: 'breakwater', use: 'breaker instances, defaults', source: src(newDefaultBreaker) },
    { library: 'breakwater', use: 'keyed registry', source: src(keyedRegistry) },
    { library: 'breakwater', use: 'keyed registry, one call per key', source: src(keyedCall) },
    { library: 'breakwater', use: 'keyed breakers', source: src(keyedBreakerRegistry) },
    { library: 'breakwater', use: 'keyed pipeline', source: src(keyedPipeline) },
    { library: 'breakwater', use: 'pipeline per call', source: src(pipelinePerCall) },
  ];
}
