import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** A real tracer exporting to memory, with async context kept across awaits. */
export interface Tracing {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  /** Finished spans by name (exactly one each). */
  span(name: string): ReadableSpan;
  /** Disables the global context manager and shuts the provider down. */
  close(): Promise<void>;
}

export function startTracing(): Tracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const manager = new AsyncLocalStorageContextManager().enable();
  if (!context.setGlobalContextManager(manager)) {
    throw new Error('A global context manager was already registered');
  }
  return {
    tracer: provider.getTracer('breakwater-test'),
    exporter,
    span(name) {
      const spans = exporter.getFinishedSpans().filter((s) => s.name === name);
      if (spans.length !== 1) throw new Error(`Expected one span ${name}, got ${spans.length}`);
      return spans[0]!;
    },
    async close() {
      context.disable();
      await provider.shutdown();
    },
  };
}
