import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

/**
 * Tests that start the server, the CLI, npm or a linter as separate processes. They are the slowest
 * per test and need no second pass on another database, so they form their own project:
 * `npm run test:processes` (CI runs it once, on PostgreSQL with Redis, after `npm test`).
 */
export const PROCESS_TESTS = [
  'test/flows/cli.test.ts',
  'test/flows/startup.test.ts',
  'test/flows/money-crash.test.ts',
  'test/flows/offers-crash.test.ts',
  'test/flows/scale-out.test.ts',
  'test/flows/deploy-files.test.ts',
  'test/flows/openapi-lint.test.ts',
  'test/flows/typed-client.test.ts',
  'test/flows/answer-leak.test.ts',
]

export default defineConfig({
  test: {
    pool: 'forks',
    // One test process per core. Vitest's default keeps a core for its own process, which is mostly
    // idle while the files run: on two cores that left one process and halved the suite's speed.
    maxWorkers: availableParallelism(),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Files run in parallel, each on its own database copy; tests inside a file run in order.
    sequence: { concurrent: false },
    // A worker process runs file after file with its modules loaded once: a third less CPU for the
    // suite than a fresh process per file. Each file still builds its own app on its own database,
    // and nothing in src/ keeps state at module level that a file could leave behind.
    isolate: false,
    projects: [
      // The set-up (migrations, PgBouncer) is each project's own: at the root it would run once more.
      { extends: true, test: { name: 'suite', globalSetup: ['./test/setup/global-setup.ts'], include: ['src/**/*.test.ts', 'test/**/*.test.ts'], exclude: PROCESS_TESTS } },
      { extends: true, test: { name: 'processes', globalSetup: ['./test/setup/global-setup.ts'], include: PROCESS_TESTS } },
    ],
  },
})
