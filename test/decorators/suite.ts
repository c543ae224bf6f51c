/**
 * The decorator tests, run once per compiler and decorator mode (see the *.test.ts files next
 * to this one) against the fixture classes as that compiler emitted them.
 */
import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf } from '../support/errors.js';
import { type Compiled, compile, describeVariant, type Fixtures, type Variant } from './compile.js';
import type { Behaviour } from './fixtures/classes.js';

type Lib = Fixtures['lib'];

export function decoratorSuite(variant: Variant): void {
  let compiled: Compiled;
  let f: Fixtures;
  let lib: Lib;
  let ManualClock: Fixtures['testing']['ManualClock'];
  let flushMicrotasks: Fixtures['testing']['flushMicrotasks'];
  let pipelineOf: Fixtures['decorators']['pipelineOf'];

  beforeAll(async () => {
    compiled = await compile(variant);
    f = compiled.fixtures;
    lib = f.lib;
    ({ ManualClock, flushMicrotasks } = f.testing);
    ({ pipelineOf } = f.decorators);
  }, 120_000);

  afterAll(async () => {
    await compiled?.dispose();
  });

  const kinds = (policies: readonly unknown[]) =>
    policies.map((p) => (p as object).constructor.name);

  /** A breaker (10 failures in a row open it) on a fresh clock, its outcomes listed in `seen`. */
  const breakerRecordingOutcomes = () => {
    const clock = new ManualClock();
    const breaker = new lib.CircuitBreaker({
      window: { kind: 'consecutive', threshold: 10 },
      clock,
    });
    const seen: string[] = [];
    breaker.onFailure(() => seen.push('failure'));
    breaker.onSuccess(() => seen.push('success'));
    return { clock, breaker, seen };
  };

  describe(describeVariant(variant), () => {
    it('type checks the fixtures and emits the decorators of this mode', async () => {
      expect(compiled.version).toMatch(
        variant.compiler === 'typescript' ? /^Version 5\./ : /^Version 7\./,
      );
      const js = await readFile(compiled.output, 'utf8');
      if (variant.experimentalDecorators) {
        expect(js).toContain('__decorate(');
        expect(js).not.toContain('__esDecorate(');
      } else {
        expect(js).toContain('__esDecorate(');
        expect(js).not.toContain('__decorate(');
      }
    });

    describe('stacked decorators make one pipeline, outermost written first', () => {
      it('a retry above a breaker sends every attempt through the breaker', async () => {
        const { clock, breaker, seen } = breakerRecordingOutcomes();
        const service = new (f.stacked(clock, breaker))();

        const call = service.retryOutside(2);
        await clock.runAll();

        await expect(call).resolves.toBe('ok after 3');
        expect(seen).toEqual(['failure', 'failure', 'success']);
        const { policies } = pipelineOf(service, 'retryOutside');
        expect(kinds(policies)).toEqual(['Retry', 'CircuitBreaker']);
        expect(policies[1]).toBe(breaker);
      });

      it('a breaker above a retry sees one outcome per call, after the retries', async () => {
        const { clock, breaker, seen } = breakerRecordingOutcomes();
        const Service = f.stacked(clock, breaker);

        const ok = new Service().breakerOutside(2);
        await clock.runAll();
        await expect(ok).resolves.toBe('ok after 3');
        const failing = new Service().breakerOutside(5);
        const settled = expect(failing).rejects.toThrow('attempt 3 failed');
        await clock.runAll();
        await settled;

        expect(seen).toEqual(['success', 'failure']);
        expect(kinds(pipelineOf(new Service(), 'breakerOutside').policies)).toEqual([
          'CircuitBreaker',
          'Retry',
        ]);
      });

      it('five decorators give one five-policy pipeline in the order written, shared by all objects', async () => {
        const clock = new ManualClock();
        const Service = f.stacked(clock, new lib.CircuitBreaker({ clock }));
        const a = new Service();
        const b = new Service();

        await expect(a.fiveDeep()).resolves.toBe('five');
        const pipeline = pipelineOf(a, 'fiveDeep');
        expect(kinds(pipeline.policies)).toEqual([
          'Fallback',
          'Retry',
          'CircuitBreaker',
          'Timeout',
          'Bulkhead',
        ]);
        expect(pipelineOf(b, 'fiveDeep')).toBe(pipeline);
      });

      it('usePipeline puts the pipeline’s policies in its place; alone it is the very pipeline', () => {
        const breaker = new lib.CircuitBreaker();
        const shared = lib.pipeline(breaker);
        const service = new (f.withPipeline(shared))();

        expect(service.value(3)).toBe(3);
        expect(service.value(-3)).toBe(-1);
        const { policies } = pipelineOf(service, 'value');
        expect(kinds(policies)).toEqual(['Fallback', 'CircuitBreaker', 'Bulkhead']);
        expect(policies[1]).toBe(breaker);
        expect(service.alone(4)).toBe(8);
        expect(pipelineOf(service, 'alone')).toBe(shared);
      });
    });

    describe('instances', () => {
      it('options give one breaker per method, shared by every object of the class', () => {
        const Service = f.sharing(new ManualClock());
        const a = new Service();
        const b = new Service();

        expect(() => a.shared(false)).toThrow('down');
        expect(() => b.shared(true)).toThrow(lib.BrokenCircuitError);
        expect(pipelineOf(a, 'shared')).toBe(pipelineOf(b, 'shared'));
      });

      it('perInstance gives each object its own breaker', () => {
        const Service = f.sharing(new ManualClock());
        const a = new Service();
        const b = new Service();

        expect(() => a.own(false)).toThrow('down');
        expect(() => a.own(true)).toThrow(lib.BrokenCircuitError);
        expect(b.own(true)).toBe('up');
        expect(pipelineOf(a, 'own')).not.toBe(pipelineOf(b, 'own'));
        expect(pipelineOf(a, 'own')).toBe(pipelineOf(a, 'own'));
      });

      it('one decorator value on two methods gives each method its own breaker', () => {
        const service = new (f.sharing(new ManualClock()))();

        expect(() => service.first(false)).toThrow('down');
        expect(() => service.first(true)).toThrow(lib.BrokenCircuitError);
        expect(service.second(true)).toBe('second');
        expect(pipelineOf(service, 'first').policies[0]).not.toBe(
          pipelineOf(service, 'second').policies[0],
        );
      });
    });

    describe('inheritance and static methods', () => {
      it('an override calling super runs its own pipeline around the base method’s', async () => {
        const clock = new ManualClock();
        const { Base, Derived, Inheriting } = f.inheritance(clock);
        const derived = new Derived('d');

        await expect(derived.get(false)).resolves.toBe('d:base+derived');

        const failing = derived.get(true);
        const settled = expect(failing).rejects.toThrow('d down');
        await clock.runAll();
        await settled;
        expect(derived.calls).toBe(3);
        expect(kinds(pipelineOf(derived, 'get').policies)).toEqual(['Retry']);
        // The two failed attempts went through the base method's breaker, which they opened.
        await expect(new Base('b').get(false)).rejects.toThrow(lib.BrokenCircuitError);
        await expect(new Inheriting('i').get(false)).rejects.toThrow(lib.BrokenCircuitError);
        expect(pipelineOf(new Inheriting('i'), 'get')).toBe(pipelineOf(new Base('b'), 'get'));
      });

      it('an inherited perInstance method gives each object of the subclass its own breaker', () => {
        const { Base, Inheriting } = f.inheritance(new ManualClock());
        const one = new Inheriting('one');

        expect(() => one.own(true)).toThrow('one down');
        expect(() => one.own(false)).toThrow(lib.BrokenCircuitError);
        expect(new Inheriting('two').own(false)).toBe('two');
        expect(new Base('base').own(false)).toBe('base');
      });

      it('a static method runs with `this` the class it is called on, sharing one breaker', () => {
        const { Service, SubService } = f.statics(new ManualClock());

        expect(Service.ping(true)).toBe('pong from Service');
        expect(SubService.ping(true)).toBe('pong from SubService');
        expect(() => Service.ping(false)).toThrow('down');
        expect(() => SubService.ping(true)).toThrow(lib.BrokenCircuitError);
        expect(pipelineOf(SubService, 'ping')).toBe(pipelineOf(Service, 'ping'));
      });

      it('a static perInstance method has one breaker per class object', () => {
        const { Service, SubService } = f.statics(new ManualClock());

        expect(() => Service.own(false)).toThrow('down');
        expect(() => Service.own(true)).toThrow(lib.BrokenCircuitError);
        expect(SubService.own(true)).toBe('SubService');
      });
    });

    describe('return values', () => {
      it('a synchronous method with a breaker stays synchronous: values, errors and refusals at the call', () => {
        const calc = new (f.returns(new ManualClock()))();

        expect(calc.add(1, 2)).toBe(3);
        expect(() => calc.add(Number.NaN, 2)).toThrow(RangeError);
        expect(() => calc.add(1, 2)).toThrow(lib.BrokenCircuitError);
      });

      it('an async method returns promises, refusals included', async () => {
        const calc = new (f.returns(new ManualClock()))();

        const ok = calc.addLater(1, 2);
        expect(ok).toBeInstanceOf(Promise);
        await expect(ok).resolves.toBe(3);
        await expect(calc.addLater(Number.NaN, 2)).rejects.toThrow(RangeError);
        const refused = calc.addLater(1, 2);
        expect(refused).toBeInstanceOf(Promise);
        await expect(refused).rejects.toThrow(lib.BrokenCircuitError);
      });

      it('a method not declared async runs synchronously: its promise is tracked, a refusal throws at the call', async () => {
        const calc = new (f.returns(new ManualClock()))();

        await expect(calc.promised(4)).resolves.toBe(4);
        await expect(calc.promised(Number.NaN)).rejects.toThrow(RangeError);
        expect(() => calc.promised(4)).toThrow(lib.BrokenCircuitError);
      });

      it('a fallback over a bulkhead without a queue answers synchronously, nested calls included', () => {
        const calc = new (f.returns(new ManualClock()))();

        expect(calc.guarded(5)).toBe(5);
        expect(calc.guarded(-5)).toBe(-1);
        // The nested call finds the one permit taken and falls back.
        expect(calc.guarded(0)).toBe(-1);
      });

      it('a bulkhead with a queue or a retry makes the method return a promise', async () => {
        const calc = new (f.returns(new ManualClock()))();

        const queued = calc.queued(7);
        expect(queued).toBeInstanceOf(Promise);
        await expect(queued).resolves.toBe(7);
        const retried = calc.retried(8);
        expect(retried).toBeInstanceOf(Promise);
        await expect(retried).resolves.toBe(8);
      });

      it('overloaded methods keep their signatures and work', () => {
        expect(f.overloads()).toEqual({ n: 42, s: '42' });
      });
    });

    describe('members that are not methods are refused when the class is defined', () => {
      it.each([
        ['getter', '`value` is a getter'],
        ['setter', '`value` is a setter'],
        ['field', '`handler` is a field'],
        ['klass', '`Decorated` is a class'],
        ['generator', '`values` is a generator method'],
      ] as const)('%s', (member, message) => {
        const error = errorOf(lib.UsageError, () => f.notMethods[member]());
        expect(error.message).toContain('decorates methods only');
        expect(error.message).toContain(message);
      });
    });

    describe('AbortSignal argument', () => {
      it('the last argument is the execution’s signal: aborting it ends a retry delay at once', async () => {
        const clock = new ManualClock();
        const client = new (f.signals(clock))();
        const controller = new AbortController();

        const call = client.retried(true, controller.signal);
        await flushMicrotasks();
        expect(client.received).toEqual([controller.signal]);
        const reason = new Error('stop');
        controller.abort(reason);

        await expect(call).rejects.toBe(reason);
        expect(client.received).toHaveLength(1);
        expect(clock.pendingTimers).toBe(0);
      });

      it('an already aborted signal rejects with its reason without calling the method', async () => {
        const client = new (f.signals(new ManualClock()))();
        const reason = new Error('gone');

        await expect(client.retried(false, AbortSignal.abort(reason))).rejects.toBe(reason);
        expect(client.received).toEqual([]);
      });

      it('signal: false leaves the argument to the method alone', async () => {
        const clock = new ManualClock();
        const client = new (f.signals(clock))();
        const controller = new AbortController();
        let settled = false;

        const call = client.ignoring(true, controller.signal).finally(() => {
          settled = true;
        });
        await flushMicrotasks();
        controller.abort(new Error('ignored'));
        await flushMicrotasks();
        expect(settled).toBe(false);
        const done = expect(call).rejects.toThrow('fail');
        await clock.runAll();
        await done;
        expect(client.received).toEqual([controller.signal, controller.signal, controller.signal]);
      });

      it('signal: 0 reads the signal from the first argument', async () => {
        const client = new (f.signals(new ManualClock()))();
        const controller = new AbortController();

        const call = client.first(controller.signal, true);
        await flushMicrotasks();
        const reason = new Error('stop');
        controller.abort(reason);

        await expect(call).rejects.toBe(reason);
      });

      it('with a timeout the method receives a signal that aborts at the deadline, not the caller’s', async () => {
        const clock = new ManualClock();
        const client = new (f.signals(clock))();
        const controller = new AbortController();

        const call = client.timed(controller.signal);
        const settled = expect(call).rejects.toThrow(lib.TimeoutError);
        await flushMicrotasks();
        const [received] = client.received;
        expect(received).toBeInstanceOf(AbortSignal);
        expect(received).not.toBe(controller.signal);
        expect(received!.aborted).toBe(false);
        clock.advance(50);

        await settled;
        expect(received!.reason).toBeInstanceOf(lib.TimeoutError);
        expect(controller.signal.aborted).toBe(false);
      });

      it('with a timeout, aborting the caller’s signal aborts the method’s with the same reason', async () => {
        const clock = new ManualClock();
        const client = new (f.signals(clock))();
        const controller = new AbortController();

        const call = client.timed(controller.signal);
        await flushMicrotasks();
        const reason = new Error('caller gave up');
        controller.abort(reason);

        await expect(call).rejects.toBe(reason);
        expect(client.received[0]!.reason).toBe(reason);
      });

      it('with signal: <index> and a timeout the method gets a signal even when the caller passes none', async () => {
        const clock = new ManualClock();
        const client = new (f.signals(clock))();

        const call = client.timedAt('id');
        const settled = expect(call).rejects.toThrow(lib.TimeoutError);
        await flushMicrotasks();
        expect(client.received[0]).toBeInstanceOf(AbortSignal);
        clock.advance(50);
        await settled;
      });

      it('a synchronous method receives its arguments as given', () => {
        const client = new (f.signals(new ManualClock()))();
        const controller = new AbortController();

        expect(client.sync(controller.signal)).toBe('sync');
        expect(client.received).toEqual([controller.signal]);
      });
    });

    describe('registry names and keys', () => {
      const config = (clock: InstanceType<typeof ManualClock>) =>
        new lib.Registry(
          {
            retries: {
              standard: { maxAttempts: 2, delay: '10ms', backoff: 'constant', jitter: 'none' },
            },
            circuitBreakers: {
              payments: { window: { kind: 'consecutive', threshold: 2 } },
              hosts: { window: { kind: 'consecutive', threshold: 2 } },
            },
            bulkheads: { pools: { maxConcurrent: 1 } },
            keys: { maxKeys: 2 },
          },
          { clock },
        );

      it('names resolve through the given registry: its instances make the pipeline', async () => {
        const clock = new ManualClock();
        const registry = config(clock);
        const client = new (f.named(registry))();

        const call = client.charge(true);
        const settled = expect(call).rejects.toThrow('declined');
        await clock.runAll();
        await settled;

        // Both attempts went through the named breaker, which two failures open.
        expect(registry.circuitBreaker('payments').state).toBe('open');
        expect(pipelineOf(client, 'charge').policies).toEqual([
          registry.retry('standard'),
          registry.circuitBreaker('payments'),
        ]);
      });

      it('a name is looked up at the first call, so an instance registered after the class is used', () => {
        const registry = new lib.Registry();
        const Client = f.lateNamed(registry);
        const breaker = new lib.CircuitBreaker();
        registry.register('late', breaker);

        expect(new Client().ping()).toBe('pong');
        expect(pipelineOf(new Client(), 'ping').policies).toEqual([breaker]);
      });

      it('@rateLimit: a sync method stays sync and refuses past its rate; per key by name', async () => {
        const clock = new ManualClock();
        const registry = new lib.Registry(
          { rateLimiters: { 'per-user': { limit: 1, period: '1s' } } },
          { clock },
        );
        const api = new (f.rateLimited(clock, registry))();
        expect(api.ping()).toBe('pong');
        expect(api.ping()).toBe('pong');
        expect(() => api.ping()).toThrow(lib.RateLimitedError);
        clock.advance(500);
        expect(api.ping()).toBe('pong');
        expect(kinds(pipelineOf(api, 'ping').policies)).toEqual(['RateLimiter']);

        await expect(api.profile('ann')).resolves.toBe('profile of ann');
        await expect(api.profile('ann')).rejects.toThrow(lib.RateLimitedError);
        await expect(api.profile('bob')).resolves.toBe('profile of bob');
        expect(registry.keyedRateLimiter('per-user', 'ann').available).toBe(0);
      });

      it('key gives each host its own breaker from the registry', async () => {
        const registry = config(new ManualClock());
        const client = new (f.named(registry))();

        await expect(client.fetchFrom('a', true)).rejects.toThrow('a down');
        await expect(client.fetchFrom('a', true)).rejects.toThrow('a down');
        await expect(client.fetchFrom('a', false)).rejects.toThrow(lib.BrokenCircuitError);
        await expect(client.fetchFrom('b', false)).resolves.toBe('from b');

        expect(registry.keyedCircuitBreaker('hosts', 'a').state).toBe('open');
        expect(registry.keyedCircuitBreaker('hosts', 'b').state).toBe('closed');
        const keys = registry
          .snapshot()
          .instances.filter((i) => i.kind === 'circuitBreaker' && i.name === 'hosts')
          .map((i) => i.key)
          .sort();
        expect(keys).toEqual(['a', 'b']);
      });

      it('keyed instances are shared by name and key across methods, and a sync method stays sync', async () => {
        const registry = config(new ManualClock());
        const client = new (f.named(registry))();

        expect(client.sync('t1', 'h1', false)).toBe('t1@h1');
        expect(() => client.sync('t1', 'h1', true)).toThrow('t1@h1 down');
        expect(() => client.sync('t2', 'h1', true)).toThrow('t2@h1 down');
        expect(() => client.sync('t1', 'h1', false)).toThrow(lib.BrokenCircuitError);
        // fetchFrom keys the same 'hosts' breakers by its first argument.
        await expect(client.fetchFrom('h1', false)).rejects.toThrow(lib.BrokenCircuitError);
        expect(registry.keyedBulkhead('pools', 't1').inFlight).toBe(0);
      });

      it('each call asks the registry, so an evicted key gets a fresh breaker', async () => {
        const registry = config(new ManualClock());
        const client = new (f.named(registry))();

        await expect(client.fetchFrom('a', true)).rejects.toThrow('a down');
        await expect(client.fetchFrom('b', false)).resolves.toBe('from b');
        await expect(client.fetchFrom('c', false)).resolves.toBe('from c');
        // maxKeys is 2: 'a' (closed, least recently used) was evicted with its one failure.
        await expect(client.fetchFrom('a', true)).rejects.toThrow('a down');
        expect(registry.keyedCircuitBreaker('hosts', 'a').state).toBe('closed');
      });

      it('without { registry } a name resolves through the default registry', () => {
        lib.defaultRegistry.reconfigure({
          circuitBreakers: {
            'decorators-default': { window: { kind: 'consecutive', threshold: 1 } },
          },
        });
        const client = new (f.defaultNamed())();

        expect(client.ping(false)).toBe('pong');
        expect(() => client.ping(true)).toThrow('down');
        expect(() => client.ping(false)).toThrow(lib.BrokenCircuitError);
        expect(lib.defaultRegistry.circuitBreaker('decorators-default').state).toBe('open');
        lib.defaultRegistry.dispose();
      });
    });

    describe('a decorated method and the same pipeline used directly behave the same', () => {
      const behaviour = fc.constantFrom<Behaviour>('ok', 'fail', 'slow', 'hang');
      const call = fc.record({
        attempts: fc.array(behaviour, { minLength: 1, maxLength: 3 }),
        startAfter: fc.integer({ min: 0, max: 60 }),
      });
      const rounds = fc.array(
        fc.record({
          gap: fc.integer({ min: 0, max: 150 }),
          calls: fc.array(call, { maxLength: 3 }),
        }),
        { minLength: 1, maxLength: 12 },
      );

      it('async: retry, breaker, timeout, bulkhead (outcomes and events)', async () => {
        type Rounds = { gap: number; calls: { attempts: Behaviour[]; startAfter: number }[] }[];
        const run = async (decorated: boolean, script: Rounds) => {
          const clock = new ManualClock();
          const log: unknown[] = [];
          let invoke: (plan: Behaviour[], value: string) => Promise<string>;
          let policies: readonly unknown[];
          if (decorated) {
            const twin = new (f.twin(clock))();
            invoke = (plan, value) => twin.call(plan, value);
            policies = pipelineOf(twin, 'call').policies;
          } else {
            const o = f.twinOptions(clock);
            const direct = lib.pipeline(
              new lib.Retry(o.retry),
              new lib.CircuitBreaker(o.breaker),
              new lib.Timeout(o.timeout),
              new lib.Bulkhead(o.bulkhead),
            );
            invoke = (plan, value) =>
              direct.execute(async ({ signal }) => f.attempt(clock, plan, signal, value));
            policies = direct.policies;
          }
          record(log, clock, policies as Lib['Pipeline']['prototype']['policies']);
          let n = 0;
          for (const round of script) {
            await clock.advanceAsync(round.gap);
            for (const c of round.calls) {
              const value = `call ${n++}`;
              const plan = [...c.attempts];
              clock.setTimer(() => {
                invoke(plan, value).then(
                  (v) => log.push([clock.now(), 'resolved', value, v]),
                  (e: unknown) => log.push([clock.now(), 'rejected', value, show(e)]),
                );
              }, c.startAfter);
            }
            await clock.runAll();
          }
          return log;
        };
        await fc.assert(
          fc.asyncProperty(rounds, async (script) => {
            const decorated = await run(true, script);
            const direct = await run(false, script);
            expect(decorated).toEqual(direct);
          }),
          { numRuns: 60 },
        );
      });

      it('sync: fallback, breaker, bulkhead (results and events)', () => {
        const steps = fc.array(
          fc.record({ behaviour: fc.constantFrom<Behaviour>('ok', 'fail'), gap: fc.nat(60) }),
          { minLength: 1, maxLength: 40 },
        );
        const run = (decorated: boolean, script: { behaviour: Behaviour; gap: number }[]) => {
          const clock = new ManualClock();
          const log: unknown[] = [];
          let invoke: (behaviour: Behaviour, value: string) => string;
          let policies: readonly unknown[];
          if (decorated) {
            const twin = new (f.syncTwin(clock))();
            invoke = (b, value) => twin.call(b, value);
            policies = pipelineOf(twin, 'call').policies;
          } else {
            const o = f.twinOptions(clock);
            const direct = lib.pipeline(
              new lib.Fallback({
                action: ({ error }) => `fallback: ${(error as Error).message}`,
              }),
              new lib.CircuitBreaker(o.breaker),
              new lib.Bulkhead(1),
            );
            invoke = (b, value) =>
              direct.executeSync(() => {
                if (b === 'fail') throw new Error(`${value} failed`);
                return value;
              });
            policies = direct.policies;
          }
          record(log, clock, policies as Lib['Pipeline']['prototype']['policies']);
          script.forEach((step, i) => {
            clock.advance(step.gap);
            log.push([clock.now(), 'returned', invoke(step.behaviour, `call ${i}`)]);
          });
          return log;
        };
        fc.assert(
          fc.property(steps, (script) => {
            expect(run(true, script)).toEqual(run(false, script));
          }),
          { numRuns: 100 },
        );
      });
    });
  });

  /** Logs every event of `policies` with the time it happened. */
  function record(
    log: unknown[],
    clock: { now(): number },
    policies: Lib['Pipeline']['prototype']['policies'],
  ): void {
    for (const p of policies) {
      const at = (kind: string, event: object) =>
        log.push([
          clock.now(),
          kind,
          JSON.stringify(event, (_, v) => (v instanceof Error ? show(v) : v)),
        ]);
      if (p instanceof lib.CircuitBreaker) {
        p.onStateChange((e) => at('state', e));
        p.onSuccess((e) => at('success', e));
        p.onFailure((e) => at('failure', e));
        p.onRejected((e) => at('breaker-rejected', e));
      } else if (p instanceof lib.Retry) {
        p.onRetry((e) => at('retry', e));
        p.onGiveUp((e) => at('give-up', e));
      } else if (p instanceof lib.Timeout) {
        p.onTimeout((e) => at('timeout', e));
      } else if (p instanceof lib.Bulkhead) {
        p.onRejected((e) => at('bulkhead-rejected', e));
      } else if (p instanceof lib.Fallback) {
        p.onFallback((e) => at('fallback', e));
      }
    }
  }
}

function show(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
