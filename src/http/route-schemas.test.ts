import { Type } from '@sinclair/typebox'
import { describe, expect, it } from 'vitest'
import { NUL_FREE, patternExcludesNul, withInputRules, withoutNul } from './route-schemas.ts'

describe('the input rules every route shares', () => {
  it.each([
    ['^[a-z0-9_]+$', true],
    ['^\\+?[0-9][0-9 ()-]{3,24}$', true],
    ['^([0-9a-f]{8}|[a-z]+)$', true],
    ['\\S', false],
    ['^\\s*\\S.*\\S\\s*$', false],
    ['^[^@]+$', false],
    ['^a|b$', false],
    ['^[\\x00-\\x7f]+$', false],
    ['^[\\x21-\\x7e]{1,255}$', true],
    ['^[\\u0000-\\u00ff]$', false],
    ['^\\u00e9$', true],
    ['^[a-z]+', false],
    ['^(?=.*[a-z])(?=.*[0-9])', false],
  ])('knows whether the pattern %s can only match text without NUL (%s)', (pattern, expected) => {
    expect(patternExcludesNul(pattern)).toBe(expected)
    // The check is conservative: a pattern it trusts never matches a NUL.
    if (expected) expect(new RegExp(pattern, 'u').test('a\u0000b')).toBe(false)
  })

  it('adds the NUL rule to every string that does not already exclude it, copying only what changes', () => {
    const shared = Type.String({ maxLength: 10 })
    const body = Type.Object({
      plain: shared,
      blank: Type.String({ pattern: '\\S' }),
      strict: Type.String({ pattern: '^[a-z]+$' }),
      id: Type.String({ format: 'uuid' }),
      choice: Type.Union([Type.Literal('a'), Type.Literal('b')]),
      list: Type.Array(Type.String()),
      nested: Type.Object({ note: Type.Optional(Type.String()) }),
      count: Type.Integer(),
    })
    const ruled = withoutNul(body) as typeof body
    expect(ruled.properties.plain).toMatchObject({ maxLength: 10, pattern: NUL_FREE })
    expect(ruled.properties.blank).toMatchObject({ pattern: '\\S', allOf: [{ pattern: NUL_FREE }] })
    expect(ruled.properties.strict).toBe(body.properties.strict)
    expect(ruled.properties.id).toBe(body.properties.id)
    expect(ruled.properties.choice).toBe(body.properties.choice)
    expect(ruled.properties.list.items).toMatchObject({ pattern: NUL_FREE })
    expect(ruled.properties.nested.properties.note).toMatchObject({ pattern: NUL_FREE })
    expect(ruled.properties.count).toBe(body.properties.count)
    // TypeBox schemas are shared between routes (and with answers): the original is untouched.
    expect(shared).not.toHaveProperty('pattern')
    expect(withoutNul(Type.Object({ strict: Type.String({ pattern: '^[a-z]+$' }) }))).toEqual(Type.Object({ strict: Type.String({ pattern: '^[a-z]+$' }) }))
  })

  it('refuses unknown query parameters and declares 400 where input is validated; leaves multipart forms to their handlers', () => {
    const response = { 200: Type.Object({}) }
    const listed = withInputRules({ querystring: Type.Object({ page: Type.Integer() }), response })!
    expect(listed.querystring).toMatchObject({ additionalProperties: false })
    expect(listed.response).toHaveProperty('400')
    const form = { consumes: ['multipart/form-data'], body: Type.Object({ note: Type.String() }), response }
    expect((withInputRules(form)!.body as { properties: { note: object } }).properties.note).not.toHaveProperty('pattern')
    const paramsOnly = withInputRules({ params: Type.Object({ id: Type.String({ format: 'uuid' }) }), response })!
    expect(paramsOnly.response).not.toHaveProperty('400')
  })
})
