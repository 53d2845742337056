import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'

/**
 * Helmet's headers, computed once. With a fixed policy (no nonces) they depend on nothing in the
 * request, and `@fastify/helmet` rebuilt the whole policy on every request (about 2% of a read's
 * CPU). Helmet itself still decides what the headers are: its middleware runs once here against
 * a recording response.
 */
export function securityHeadersOf(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value)
    },
    removeHeader: () => undefined,
  }
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => undefined)
  return headers
}
