import { describe, expect, it } from 'vitest'
import { bareBody, bareSchema, preferredEnvelope } from './envelope.ts'

describe('answer envelopes', () => {
  it.each([
    [undefined, undefined],
    ['envelope=none', 'none'],
    ['envelope=wrapped', 'wrapped'],
    ['Envelope="None"', 'none'],
    ['respond-async, envelope=none', 'none'],
    ['return=minimal; foo=bar, envelope=none; strict', 'none'],
    [['respond-async', 'envelope=none'], 'none'],
    // Only the first `envelope` preference counts; an unknown value asks for nothing.
    ['envelope=none, envelope=wrapped', 'none'],
    ['envelope=naked, envelope=none', undefined],
    ['envelope', undefined],
    ['envelopes=none', undefined],
    ['return=representation', undefined],
  ] as const)('reads the Prefer header %j as %j', (header, expected) => {
    expect(preferredEnvelope(header as string | string[] | undefined)).toBe(expected)
  })

  it('unwraps a payload, reshapes a page (count is the total, the rest of the pagination follows) and keeps only the error', () => {
    expect(bareBody({ success: true, data: { id: 'a' } })).toEqual({ id: 'a' })
    expect(bareBody({ success: true, data: [1, 2] })).toEqual([1, 2])
    expect(bareBody({ success: true, data: null })).toBeNull()
    const page = { items: [{ id: 'a' }], pagination: { page: 2, limit: 1, total: 3, pages: 3, hasNext: true, hasPrev: true, nextCursor: 'c' } }
    expect(JSON.stringify(bareBody({ success: true, data: page }))).toBe(
      JSON.stringify({ results: [{ id: 'a' }], count: 3, page: 2, pages: 3, hasNext: true, hasPrev: true, limit: 1, nextCursor: 'c' }),
    )
    const error = { code: 'NOT_FOUND', message: 'Service not found', details: [] }
    expect(bareBody({ success: false, error })).toEqual({ error })
    expect(bareBody({ openapi: '3.1.0' })).toBeUndefined()
    expect(bareBody('text')).toBeUndefined()
  })

  it('describes the bare shape of documented answers', () => {
    const item = { type: 'object', properties: { id: { type: 'string' } } }
    expect(bareSchema({ type: 'object', properties: { success: { const: true, type: 'boolean' }, data: item } })).toBe(item)
    const page = bareSchema({
      type: 'object',
      properties: {
        success: { const: true, type: 'boolean' },
        data: {
          type: 'object',
          required: ['items', 'pagination'],
          properties: {
            items: { type: 'array', items: item },
            pagination: { type: 'object', required: ['page', 'limit', 'total', 'pages', 'hasNext', 'hasPrev'], properties: { page: {}, limit: {}, total: { type: 'integer' }, pages: {}, hasNext: {}, hasPrev: {} } },
          },
        },
      },
    }) as { properties: Record<string, unknown>; required: string[] }
    expect(Object.keys(page.properties)).toEqual(['results', 'count', 'page', 'pages', 'hasNext', 'hasPrev', 'limit'])
    expect(page.required).toEqual(['results', 'count', 'page', 'limit', 'pages', 'hasNext', 'hasPrev'])
    const error = { type: 'object', properties: { code: { type: 'string' } } }
    expect(bareSchema({ type: 'object', description: 'Not found.', properties: { success: { const: false, type: 'boolean' }, error } })).toEqual({
      type: 'object',
      properties: { error },
      required: ['error'],
      description: 'Not found.',
    })
    expect(bareSchema({ type: 'string', format: 'binary' })).toEqual({ type: 'string', format: 'binary' })
    expect(bareSchema({ type: 'object', properties: { success: { type: 'boolean', enum: [true] }, data: item } })).toBe(item)
  })
})
