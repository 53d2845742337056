import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMarketplaceClient } from '../../clients/ts/index.ts'
import { CLIENT_DIR, generatedClientFiles } from '../../scripts/openapi-document.ts'
import { createUser, DEFAULT_PASSWORD } from '../factories/users.ts'
import { createTestApp, type TestContext } from '../setup/test-app.ts'

describe('the typed TypeScript client (clients/ts)', () => {
  it('is generated from the current OpenAPI document (run `npm run client:generate` after changing a route)', async () => {
    const files = await generatedClientFiles()
    for (const [name, content] of Object.entries(files)) {
      expect(readFileSync(join(CLIENT_DIR, name), 'utf8') === content, `clients/ts/${name} is out of date: run npm run client:generate`).toBe(true)
    }
  })

  describe('against a running server', () => {
    let ctx: TestContext
    let baseUrl: string
    beforeAll(async () => {
      ctx = await createTestApp()
      await ctx.app.listen({ port: 0, host: '127.0.0.1' })
      baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
    })
    afterAll(() => ctx.close())

    it('logs in, browses the catalogue and reads the wallet with typed calls', async () => {
      const { user } = await createUser(ctx)
      const session: { token?: string } = {}
      const api = createMarketplaceClient({ baseUrl, accessToken: () => session.token })

      const login = await api.POST('/api/v1/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } })
      expect(login.response.status).toBe(200)
      session.token = login.data?.data.accessToken
      expect(typeof session.token).toBe('string')

      const services = await api.GET('/api/v1/services', { params: { query: { limit: 5, sortBy: 'createdAt' } } })
      expect(services.response.status).toBe(200)
      expect(services.data?.data.pagination.limit).toBe(5)

      const wallet = await api.GET('/api/v1/wallet')
      expect(wallet.response.status).toBe(200)
      expect(wallet.data?.data).toEqual({ balance: 0, escrow: 0, pendingPayouts: 0, currency: 'USD' })
    })

    it('answers errors in the typed envelope', async () => {
      const api = createMarketplaceClient({ baseUrl })
      const refused = await api.GET('/api/v1/wallet')
      expect(refused.response.status).toBe(401)
      expect(refused.error).toMatchObject({ success: false, error: { code: 'UNAUTHENTICATED' } })
    })
  })
})
