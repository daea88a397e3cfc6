import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// One graphql for everyone: Vite would resolve our `import 'graphql'` to its ESM build while
// type-graphql, Apollo and graphql-ws (loaded by Node) get the CommonJS one, and graphql refuses
// types from "another module or realm". Node itself (npm start) always loads the CommonJS one.
const graphqlAlias = [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }];

// Three projects: pure unit tests; everything against real PostgreSQL; and the
// core REST suite once more on the embedded database (PGlite), as `npm start` uses it.
const shared = { testTimeout: 30_000, hookTimeout: 90_000, pool: 'forks' as const, alias: graphqlAlias };

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'postgres',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          env: { KASSA_TEST_DB: 'postgres' },
        },
      },
      {
        test: {
          ...shared,
          name: 'embedded',
          include: ['test/e2e/rest-*.test.ts', 'test/e2e/graphql-subscription.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          env: { KASSA_TEST_DB: 'embedded' },
        },
      },
    ],
  },
});
