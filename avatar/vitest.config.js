import { defineConfig } from 'vitest/config';

// Tests wait on real timers and animation frames: run them one after another (concurrency makes them flaky).
export default defineConfig({
  test: {
    include: ['test/**/*.test.js'],
    testTimeout: 15000,
  },
});
