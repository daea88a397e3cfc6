import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One graphql for everyone: Vite would resolve our `import 'graphql'` to its ESM build while
// type-graphql, Apollo and graphql-ws (loaded by Node) get the CommonJS one, and graphql refuses
// types from "another module or realm". Node itself (npm start) always loads the CommonJS one.
const graphqlAlias = [{ find: /^graphql$/, replacement: createRequire(import.meta.url).resolve('graphql') }];

// Three projects: pure unit tests (`npm run test:unit`); everything against real PostgreSQL;
// and a representative subset once more on the embedded database (PGlite), as `npm start`
// uses it: what differs there is the database (one pooled connection, no LISTEN/NOTIFY across
// connections), so create (quoting, idempotency, the outbox), bind, concurrent requests and the
// subscription's polling fallback. The HTTP-only suites (auth, errors, get, hardening,
// properties) behave the same on both and run on PostgreSQL only.
const EMBEDDED_SUBSET = [
  'test/e2e/rest-create.test.ts',
  'test/e2e/rest-bind.test.ts',
  'test/e2e/rest-concurrency.test.ts',
  'test/e2e/graphql-subscription.test.ts',
  'test/e2e/payment-trust.test.ts',
  'test/e2e/read-caches.test.ts',
];
const shared = { testTimeout: 30_000, hookTimeout: 90_000, pool: 'forks' as const, alias: graphqlAlias };

// One more test file at once than there are cores (three on two): most files wait on PostgreSQL, anvil, a browser or a
// child process more than they compute (the suite used half of two cores with two at once; docs/testing.md).
const maxWorkers = Math.max(3, availableParallelism() + 1);

export default defineConfig({
  test: {
    maxWorkers,
    projects: [
      { test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: {
          ...shared,
          name: 'postgres',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          env: { KASSA_TEST_DB: 'postgres' },
          // Each worker loads Kassa, Prisma, viem and the GraphQL schema once for the files it runs, not once a file
          // (docs/testing.md#test-processes); the embedded project keeps a process a file (PGlite in process).
          isolate: false,
        },
      },
      {
        test: {
          ...shared,
          name: 'embedded',
          include: EMBEDDED_SUBSET,
          globalSetup: ['test/support/global-setup.ts'],
          env: { KASSA_TEST_DB: 'embedded' },
        },
      },
    ],
  },
});
