/**
 * A breaker per downstream host, through the registry, on the happy path: calls spread over
 * 100 keys that all exist. A keyed pipeline (`pipeline(registry.keyed('circuitBreaker',
 * 'api'))`, `execute(fn, { key })`), against a pipeline built per call around the key's
 * breaker, and against one pipeline of one key's breaker built once (the least a call can cost).
 */
import { keyedBreakerRegistry, keyedPipeline, pipelinePerCall } from '../lib/pipelines.mjs';
import { ns, over } from '../lib/prose.mjs';
import { BARE_ASYNC, bareAsync, isOne } from '../lib/rows.mjs';
import { asyncTarget } from '../lib/targets.mjs';

export const title = 'Keyed pipelines: a breaker per key, found per call';
export const order = 1.5;

const KEYS = Array.from({ length: 100 }, (_, i) => `host-${i}.example`);
const REUSED = 'one key, pipeline built once';
const KEYED = 'keyed pipeline, execute(fn, { key }), 100 keys';
const PER_CALL = 'pipeline(registry.keyedCircuitBreaker(api, key)) per call, 100 keys';

export function rows() {
  /** A registry whose 100 keys exist, each called once. */
  const warm = () => {
    const registry = keyedBreakerRegistry();
    const p = keyedPipeline(registry);
    for (const key of KEYS) p.executeSync(() => 1, { key });
    return registry;
  };
  return [
    bareAsync(),
    {
      library: 'breakwater',
      variant: REUSED,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const p = pipelinePerCall(warm(), KEYS[0]);
        return () => p.execute(asyncTarget);
      },
      check: isOne,
    },
    {
      library: 'breakwater',
      variant: KEYED,
      kind: 'async',
      baseline: BARE_ASYNC,
      versus: REUSED,
      prepare: () => {
        const p = keyedPipeline(warm());
        let i = 0;
        return () => {
          const key = KEYS[i];
          i = i === 99 ? 0 : i + 1;
          return p.execute(asyncTarget, { key });
        };
      },
      check: isOne,
    },
    {
      library: 'breakwater',
      variant: PER_CALL,
      kind: 'async',
      baseline: BARE_ASYNC,
      prepare: () => {
        const registry = warm();
        let i = 0;
        return () => {
          const key = KEYS[i];
          i = i === 99 ? 0 : i + 1;
          return pipelinePerCall(registry, key).execute(asyncTarget);
        };
      },
      check: isOne,
    },
  ];
}

/** This scenario's paragraph in “What the numbers say” (lib/doc.mjs); none when its rows are absent. */
export function reading({ get }) {
  const S = 'keyed-pipeline';
  const keyed = get(S, 'breakwater', KEYED);
  const reused = get(S, 'breakwater', REUSED);
  const perCall = get(S, 'breakwater', PER_CALL);
  if (keyed && reused && perCall) {
    return (
      `A breaker per key through the registry, over 100 keys: a keyed pipeline adds ${over(keyed)} ` +
      `to an awaited call, ${ns(keyed.versusNs ?? keyed.nsPerOp - reused.nsPerOp)} more than one ` +
      `pipeline of one breaker built once (${over(reused)}); building a pipeline per call around ` +
      `the key's breaker adds ${over(perCall)}.`
    );
  }
}
