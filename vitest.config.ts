import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Child processes rather than worker_threads: tests may spawn workers/child processes,
    // touch process-wide state (signals, process.on hooks) or need a clean exit per file.
    pool: 'forks',
    setupFiles: ['test/setup/unhandled.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    teardownTimeout: 10_000,
  },
});
