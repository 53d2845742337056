import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { JsonText } from '../db/json-sql.ts'
import { Envelope } from './common.schemas.ts'
import { answer, checkJsonText } from './json-text.ts'

const Item = Type.Object({ id: Type.String(), price: Type.Number() })

async function appSending(data: unknown, checks: boolean) {
  const app = Fastify()
  checkJsonText(app, checks)
  app.get('/', { schema: { response: { 200: Envelope(Item) } } }, async (_request, reply) => answer(reply, data as JsonText<{ id: string; price: number }>))
  await app.ready()
  return app
}

describe('an answer sent as JSON text', () => {
  it('is sent as it is, inside the envelope, as JSON', async () => {
    const app = await appSending(new JsonText('{"id":"a","price":12.5}'), true)
    const response = await app.inject({ url: '/' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.body).toBe('{"success":true,"data":{"id":"a","price":12.5}}')
  })

  it('fails outside production when it holds a field the response schema does not name', async () => {
    const app = await appSending(new JsonText('{"id":"a","price":12.5,"passwordHash":"x"}'), true)
    const response = await app.inject({ url: '/' })
    expect(response.statusCode).toBe(500)
    expect(response.body).not.toContain('passwordHash":"x')
  })

  it('fails outside production when a value is not of the type the schema says', async () => {
    const app = await appSending(new JsonText('{"id":"a","price":"12.50"}'), true)
    expect((await app.inject({ url: '/' })).statusCode).toBe(500)
  })

  it('is trusted in production, where the statement built it from the same schema', async () => {
    const app = await appSending(new JsonText('{"id":"a","price":12.5}'), false)
    expect((await app.inject({ url: '/' })).body).toBe('{"success":true,"data":{"id":"a","price":12.5}}')
  })

  it('leaves data built in Node to the serializer, which drops what the schema does not name', async () => {
    const app = await appSending({ id: 'a', price: 3, passwordHash: 'x' }, true)
    const response = await app.inject({ url: '/' })
    expect(response.json()).toEqual({ success: true, data: { id: 'a', price: 3 } })
  })
})
