import { isDeepStrictEqual } from 'node:util'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { JsonText } from '../db/json-sql.ts'
import { ok } from './common.schemas.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether an answer sent as JSON text is compared with what the route's serializer would send (all but production). */
    checksJsonText: boolean
  }
}

export function checkJsonText(app: FastifyInstance, enabled: boolean): void {
  app.decorate('checksJsonText', enabled)
}

/**
 * The success envelope around `data`. Data built in Node goes through the route's response
 * serializer, as every answer does; `JsonText` (built by a statement from the same response
 * schema, db/json-sql.ts) is sent as the text it is, wrapped in the envelope. Outside production
 * the text is checked first: parsed, serialised by the route's response schema and compared, so
 * a field the schema does not name, or a value of the wrong type, fails the request (and the
 * test that made it) instead of reaching a client.
 */
export function answer<T>(reply: FastifyReply, data: T | JsonText<T>): { success: true; data: T } {
  if (!(data instanceof JsonText)) return ok(data)
  const body = `{"success":true,"data":${data.text}}`
  if (reply.server.checksJsonText) {
    const sent: unknown = JSON.parse(body)
    const allowed: unknown = JSON.parse(reply.serialize(sent) as string)
    if (!isDeepStrictEqual(sent, allowed)) {
      throw new Error(`the JSON built by the database differs from the route's response schema: sent ${body.slice(0, 2000)}; the schema allows ${JSON.stringify(allowed).slice(0, 2000)}`)
    }
  }
  reply.header('content-type', 'application/json; charset=utf-8')
  // A string with a JSON content type is sent as it is: Fastify's serializer only runs on objects.
  return body as unknown as { success: true; data: T }
}
