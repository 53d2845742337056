import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { describe, expect, it, vi } from 'vitest'
import { JsonText } from '../db/json-sql.ts'
import { Envelope, Id, Nullable, StringEnum, Timestamp } from './common.schemas.ts'
import { answer, closedSchema } from './json-text.ts'

const Item = Type.Object({
  id: Id,
  price: Type.Number(),
  status: StringEnum(['active', 'paused']),
  note: Nullable(Type.String()),
  createdAt: Timestamp,
  owner: Type.Object({ id: Id, name: Type.String() }),
  tags: Type.Array(Type.Object({ name: Type.String() })),
})
type Item = (typeof Item)['static']

const good = { id: '0196ba0a-6912-76e0-a77c-8b1c09d3b9dd', price: 12.5, status: 'active', note: null, createdAt: '2026-01-02T03:04:05.678Z', owner: { id: '0196ba0a-6912-76e0-a77c-8b1c09d3b9de', name: 'Ana' }, tags: [{ name: 'logo' }] }

async function appSending(data: unknown) {
  const app = Fastify()
  app.get('/', { schema: { response: { 200: Envelope(Item) } } }, async (_request, reply) => answer(reply, data as JsonText<Item>))
  await app.ready()
  return app
}

const sending = (changed: Record<string, unknown>) => appSending(new JsonText(JSON.stringify({ ...good, ...changed })))

describe('an answer sent as JSON text', () => {
  it('is sent as it is, inside the envelope, as JSON', async () => {
    const app = await appSending(new JsonText(JSON.stringify(good)))
    const response = await app.inject({ url: '/' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.body).toBe(`{"success":true,"data":${JSON.stringify(good)}}`)
  })

  it.each([
    ['a field the schema does not name', { passwordHash: 'secret-value' }],
    ['a field the schema does not name, in a nested object', { owner: { ...good.owner, email: 'ana@example.com' } }],
    ['a field the schema does not name, in an array item', { tags: [{ name: 'logo', secret: 1 }] }],
    ['a value outside the enum', { status: 'hacked' }],
    ['a timestamp that is not a date-time', { createdAt: 'not a date' }],
    ['an id that is not a uuid', { id: 'x' }],
    ['a number sent as a string', { price: '12.50' }],
    ['a string where the schema allows a string or null, as a number', { note: 5 }],
    ['null where null is not allowed', { owner: null }],
    ['a required field missing', { price: undefined }],
  ])('fails with 500 when it holds %s, and never sends it', async (_case, changed) => {
    const app = await sending(changed)
    const response = await app.inject({ url: '/' })
    expect(response.statusCode).toBe(500)
    expect(response.body).not.toContain('secret-value')
    expect(response.body).not.toContain('ana@example.com')
    expect(response.body).not.toContain('"success":true')
  })

  it('keeps null where the schema allows it (it is not turned into a string)', async () => {
    const response = await (await sending({ note: null })).inject({ url: '/' })
    expect(response.json()).toEqual({ success: true, data: good })
  })

  it('leaves data built in Node to the serializer, which drops what the schema does not name', async () => {
    const app = await appSending({ ...good, passwordHash: 'x' })
    const response = await app.inject({ url: '/' })
    expect(response.json()).toEqual({ success: true, data: good })
  })
})

describe('a text sent again', () => {
  const routesSending = async (texts: () => JsonText<unknown>) => {
    const app = Fastify()
    app.get('/item', { schema: { response: { 200: Envelope(Item) } } }, async (_request, reply) => answer(reply, texts() as JsonText<Item>))
    app.get('/names', { schema: { response: { 200: Envelope(Type.Object({ name: Type.String() })) } } }, async (_request, reply) => answer(reply, texts() as JsonText<{ name: string }>))
    await app.ready()
    return app
  }
  const bodyOf = (data: unknown) => `{"success":true,"data":${JSON.stringify(data)}}`
  const parsesOf = (parse: { mock: { calls: unknown[][] } }, data: unknown) => parse.mock.calls.filter(([text]) => text === bodyOf(data)).length

  it('is parsed and checked at its first answer through a route, not at every one, whichever object holds it', async () => {
    const same = { ...good, price: 21 }
    // A new object per request with the same text, as a statement read again gives.
    const app = await routesSending(() => new JsonText(JSON.stringify(same)))
    const parse = vi.spyOn(JSON, 'parse')
    try {
      for (let request = 0; request < 3; request++) expect((await app.inject({ url: '/item' })).body).toBe(bodyOf(same))
      expect(parsesOf(parse, same)).toBe(1)
      // Another text (the service changed, the tree reloaded) is checked again.
      const changed = { ...same, price: 22 }
      const other = await routesSending(() => new JsonText(JSON.stringify(changed)))
      expect((await other.inject({ url: '/item' })).body).toBe(bodyOf(changed))
      expect(parsesOf(parse, changed)).toBe(1)
    } finally {
      parse.mockRestore()
    }
  })

  it('is checked against each route that sends it: passing one route says nothing of another', async () => {
    const app = await routesSending(() => new JsonText(JSON.stringify(good)))
    expect((await app.inject({ url: '/item' })).statusCode).toBe(200)
    const other = await app.inject({ url: '/names' })
    expect(other.statusCode).toBe(500)
    expect(other.body).not.toContain('"success":true')
  })

  it('that breaks the schema fails every time, never sent', async () => {
    const app = await routesSending(() => new JsonText(JSON.stringify({ ...good, passwordHash: 'secret-value' })))
    for (let request = 0; request < 2; request++) {
      const response = await app.inject({ url: '/item' })
      expect(response.statusCode).toBe(500)
      expect(response.body).not.toContain('secret-value')
    }
  })

  it('is remembered within a bound of characters per route: past it, the oldest is checked again', async () => {
    // Four texts of 300,000 characters: the fourth pushes the first out of the megabyte kept.
    const texts = [1, 2, 3, 4].map((n) => ({ ...good, price: 30 + n, owner: { ...good.owner, name: 'a'.repeat(300_000) } }))
    let next = texts[0]!
    const app = await routesSending(() => new JsonText(JSON.stringify(next)))
    const parse = vi.spyOn(JSON, 'parse')
    try {
      for (next of [...texts, texts[3]!, texts[0]!]) expect((await app.inject({ url: '/item' })).statusCode).toBe(200)
      expect(texts.map((text) => parsesOf(parse, text))).toEqual([2, 1, 1, 1])
    } finally {
      parse.mockRestore()
    }
  })
})

describe('closedSchema', () => {
  it('refuses unknown properties at every depth, and leaves allOf branches and records open', () => {
    const closed = closedSchema(Type.Object({ a: Type.Object({ b: Type.String() }), c: Type.Record(Type.String(), Type.String()), d: Type.Intersect([Type.Object({ e: Type.String() }), Type.Object({ f: Type.String() })]) })) as Closed
    type Closed = { additionalProperties?: boolean; properties: Record<string, Closed>; allOf: Closed[] }
    expect(closed.additionalProperties).toBe(false)
    expect(closed.properties.a?.additionalProperties).toBe(false)
    expect(closed.properties.c?.additionalProperties).toBeUndefined()
    expect(closed.properties.d?.allOf[0]?.additionalProperties).toBeUndefined()
  })
})
