import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Suites that start processes or servers run in parallel workers; each test file owns its resources.
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
