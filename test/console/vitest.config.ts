import { defineConfig } from 'vitest/config'

/**
 * The operator console in a real browser: `npm run test:console`. One server on the embedded
 * database with the demo seed, one Chromium, the tests of one file in order.
 */
export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    globalSetup: ['./test/setup/global-setup.ts'],
    include: ['test/console/*.e2e.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    sequence: { concurrent: false },
  },
})
