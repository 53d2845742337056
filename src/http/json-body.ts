import type { FastifyInstance } from 'fastify'
import { fieldError } from '../lib/errors.ts'

/**
 * Every JSON body of the API is an object. `null`, an array or a bare value is refused as such
 * (400 on `body`) by the parser, instead of reaching a handler that reads fields from it.
 */
export function objectBodiesOnly(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parseJson(request, body as string, (error, value: unknown) => {
      if (error) return done(error, undefined)
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return done(fieldError('body', 'must be a JSON object'), undefined)
      done(null, value)
    })
  })
}
