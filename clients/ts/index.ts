import createClient from 'openapi-fetch'
import type { Client, Middleware } from 'openapi-fetch'
import type { paths } from './schema.ts'

export type { components, paths } from './schema.ts'

export interface MarketplaceClientOptions {
  /** The API's public address, without `/api/v1` (for example `http://localhost:8000`). */
  baseUrl: string
  /** The access token to send, read before every request (so a refreshed token is picked up). */
  accessToken?: () => string | undefined
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof globalThis.fetch
}

/**
 * A typed client of the Marketplace API: every path, parameter, body and answer is checked by
 * the compiler against the API's OpenAPI document.
 *
 * ```ts
 * const api = createMarketplaceClient({ baseUrl: 'http://localhost:8000', accessToken: () => token })
 * const { data, error } = await api.GET('/api/v1/services', { params: { query: { search: 'logo' } } })
 * ```
 */
export function createMarketplaceClient(options: MarketplaceClientOptions): Client<paths> {
  const client = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch })
  const { accessToken } = options
  if (accessToken) {
    const bearer: Middleware = {
      onRequest({ request }) {
        const token = accessToken()
        if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`)
        return request
      },
    }
    client.use(bearer)
  }
  return client
}
