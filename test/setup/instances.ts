import { afterAll, beforeAll } from 'vitest'
import { listen } from './sockets.ts'
import { createTestApp, type TestContext } from './test-app.ts'

/**
 * Two API instances on one database, as behind a load balancer (and on one Redis when `env` names
 * it), built before the file's tests and closed after them. With `listen`, both also listen on
 * 127.0.0.1 and `firstUrl`/`secondUrl` are their chat socket addresses. Call it inside `describe`.
 */
export function twoInstances(env: Record<string, string | undefined>, options: { listen?: boolean } = {}) {
  let first: TestContext
  let second: TestContext
  let firstUrl = ''
  let secondUrl = ''
  beforeAll(async () => {
    first = await createTestApp({ env })
    second = await createTestApp({ env, database: first.database })
    if (options.listen) {
      firstUrl = await listen(first.app)
      secondUrl = await listen(second.app)
    }
  })
  afterAll(async () => {
    await second.close()
    await first.close()
  })
  return {
    get first(): TestContext {
      return first
    },
    get second(): TestContext {
      return second
    },
    get firstUrl(): string {
      return firstUrl
    },
    get secondUrl(): string {
      return secondUrl
    },
  }
}
