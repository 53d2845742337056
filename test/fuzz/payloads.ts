import fc from 'fast-check'

/**
 * JSON values with stand-ins for what `JSON.stringify` cannot write (`-0`, `1e309`) or what would
 * flood a counterexample (200 KB strings, 5,000-element arrays, 3,000 levels of nesting): each
 * stand-in serializes to the real text for the request and to a short recipe for the report.
 */
export class RawToken {
  constructor(readonly text: string) {}
}
export class LongString {
  constructor(
    readonly unit: string,
    readonly count: number,
  ) {}
}
/** `count` items; with `indexed`, each is `${prefix}${index}` so they are all distinct. */
export class HugeArray {
  constructor(
    readonly item: Json,
    readonly count: number,
    readonly indexed = false,
  ) {}
}
/** `depth` levels of `[` (or `{"a":`) around `inner`. */
export class Nested {
  constructor(
    readonly depth: number,
    readonly style: 'array' | 'object',
    readonly inner: Json = 1,
  ) {}
}
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json } | RawToken | LongString | HugeArray | Nested

const ABBREVIATE = 120

function quote(text: string, compact: boolean): string {
  const json = JSON.stringify(text)
  return compact && json.length > ABBREVIATE ? `${json.slice(0, ABBREVIATE)}…<${text.length} chars>"` : json
}

/** The JSON text of a value; `compact` gives the recipe form used in reports. */
export function serialize(value: Json, compact = false): string {
  if (value === null || typeof value === 'boolean') return String(value)
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : Number.isFinite(value) ? JSON.stringify(value) : 'null'
  if (typeof value === 'string') return quote(value, compact)
  if (value instanceof RawToken) return value.text
  if (value instanceof LongString) {
    return compact ? `(${JSON.stringify(value.unit)} × ${value.count})` : JSON.stringify(value.unit.repeat(value.count))
  }
  if (value instanceof HugeArray) {
    if (value.indexed) {
      const prefix = typeof value.item === 'string' ? value.item : 'x'
      if (compact) return `[${JSON.stringify(`${prefix}0`)}, …, ${JSON.stringify(`${prefix}${value.count - 1}`)}] (${value.count} distinct items)`
      return JSON.stringify(Array.from({ length: value.count }, (_, index) => `${prefix}${index}`))
    }
    const item = serialize(value.item, compact)
    return compact ? `[${item} × ${value.count}]` : `[${new Array<string>(value.count).fill(item).join(',')}]`
  }
  if (value instanceof Nested) {
    const [open, close] = value.style === 'array' ? ['[', ']'] : ['{"a":', '}']
    const inner = serialize(value.inner, compact)
    return compact ? `(${open} × ${value.depth}) ${inner} (${close} × ${value.depth})` : `${open.repeat(value.depth)}${inner}${close.repeat(value.depth)}`
  }
  if (Array.isArray(value)) return `[${value.map((item) => serialize(item, compact)).join(',')}]`
  return `{${Object.entries(value)
    .map(([key, item]) => `${quote(key, compact)}:${serialize(item, compact)}`)
    .join(',')}}`
}

// ---------------------------------------------------------------------------------------------
// Mutations of a JSON value
// ---------------------------------------------------------------------------------------------

type Path = (string | number)[]

const isPlainObject = (value: unknown): value is Record<string, Json> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype

/** Every position inside plain objects and arrays, the root included. */
function positions(value: Json, path: Path = []): Path[] {
  const found: Path[] = [path]
  if (Array.isArray(value)) value.forEach((item, index) => found.push(...positions(item, [...path, index])))
  else if (isPlainObject(value)) for (const [key, item] of Object.entries(value)) found.push(...positions(item, [...path, key]))
  return found
}

function copy(value: Json): Json {
  if (Array.isArray(value)) return value.map(copy)
  if (isPlainObject(value)) {
    const result: Record<string, Json> = {}
    // defineProperty keeps keys such as `__proto__` as own data properties.
    for (const [key, item] of Object.entries(value)) Object.defineProperty(result, key, { value: copy(item), enumerable: true, writable: true, configurable: true })
    return result
  }
  return value
}

function setAt(root: Json, path: Path, replacement: Json | undefined): Json {
  if (path.length === 0) return replacement ?? null
  const result = copy(root)
  let parent: Json = result
  for (const step of path.slice(0, -1)) parent = (parent as Record<string | number, Json>)[step]!
  const last = path[path.length - 1]!
  if (Array.isArray(parent)) {
    if (replacement === undefined) parent.splice(Number(last), 1)
    else parent[Number(last)] = replacement
  } else if (isPlainObject(parent)) {
    if (replacement === undefined) delete parent[last]
    else Object.defineProperty(parent, last, { value: replacement, enumerable: true, writable: true, configurable: true })
  }
  return result
}

const getAt = (root: Json, path: Path): Json => path.reduce<Json>((node, step) => (node as Record<string | number, Json>)[step] ?? null, root)

/** Numbers at and past the edges of doubles, int4, numeric(10,2) and JavaScript integers. */
export const EDGE_NUMBERS = [
  '1e308',
  '-1e308',
  '1e309',
  '-1e309',
  '-0',
  '21474836.48',
  '21474836.47',
  '99999999.99',
  '100000000',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '123456789012345678901234567890',
  '4.9e-324',
  '1e-400',
  '0.001',
  '5.005',
  '1E2',
  '-1',
]

export const WEIRD_STRINGS = [
  '',
  ' ',
  '\t\n\r',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff x',
  '\u202e\u0644\u0627 RTL',
  '😀'.repeat(30),
  'e\u0301\u0301\u0301',
  '\u200b\ufeff',
  'ＡＢＣ１２３',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '"; DROP TABLE users; --',
  '../../../etc/passwd',
  '%00%2e%2e',
  '${7*7}{{7*7}}',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e308',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'not-a-uuid',
]

export const EXTRA_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'isSuperuser', 'isStaff', 'id', 'role', 'status', 'userId', 'sellerId', 'createdAt', 'tokenVersion', '', ' ', '\u0000', '$where', 'a.b', 'x'.repeat(300)]

const wrongTypeValue: fc.Arbitrary<Json> = fc.constantFrom<Json>('text', '', 0, 1, -1, 1.5, true, false, {}, [], [1, 'a', null], { a: 1 }, '1', 'true', 'null', '[]', '{}')

/** A long string of at most about 200 KB once written as JSON. */
const longString: fc.Arbitrary<Json> = fc.constantFrom('a', 'é', '😀', ' ', '\u0000', 'ab<', '\\', '"', '\ud800').chain((unit) => {
  const bytesPerUnit = Buffer.byteLength(JSON.stringify(unit)) - 2
  return fc.integer({ min: 1_000, max: Math.floor(200_000 / bytesPerUnit) }).map((count) => new LongString(unit, count))
})

const hugeArray = (item: Json | undefined): fc.Arbitrary<Json> =>
  fc.oneof(
    fc.tuple(fc.constantFrom<Json>(...(item === undefined ? [] : [item]), 1, 'x', null, {}, [], 'view_users', 'logo'), fc.integer({ min: 1_000, max: 5_000 })).map(
      ([element, count]) => new HugeArray(element, count),
    ),
    fc.tuple(fc.constantFrom('tag-', 'x', 'X_', 'u'), fc.integer({ min: 1_000, max: 5_000 })).map(([prefix, count]) => new HugeArray(prefix, count, true)),
  )

const nestedValue: fc.Arbitrary<Json> = fc
  .tuple(fc.integer({ min: 50, max: 3_000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([depth, style]) => new Nested(depth, style))

export const edgeNumber: fc.Arbitrary<Json> = fc.constantFrom(...EDGE_NUMBERS).map((text) => new RawToken(text))

interface Mutation {
  describe: string
  apply(root: Json): Json
}

/** One change at one position of `root`: the arbitrary of every mutation it supports. */
function mutationAt(root: Json, path: Path): fc.Arbitrary<Mutation> {
  const where = path.length === 0 ? '(root)' : path.join('.')
  const current = getAt(root, path)
  const replace = (label: string, arbitrary: fc.Arbitrary<Json>): fc.Arbitrary<Mutation> =>
    arbitrary.map((replacement) => ({ describe: `${where}: ${label} ${serialize(replacement, true)}`, apply: (value) => setAt(value, path, replacement) }))
  const options: fc.Arbitrary<Mutation>[] = [
    replace('wrong type', wrongTypeValue),
    replace('null', fc.constant(null)),
    replace('edge number', edgeNumber),
    replace('weird string', fc.constantFrom(...WEIRD_STRINGS)),
    replace('long string', longString),
    replace('nested', nestedValue),
    replace('huge array', hugeArray(Array.isArray(current) ? current[0] : undefined)),
  ]
  if (isPlainObject(current)) {
    options.push(replace('array instead of object', fc.constantFrom<Json>([], [current], [1, 2, 3])))
    options.push(
      fc.tuple(fc.constantFrom(...EXTRA_KEYS), fc.oneof(wrongTypeValue, fc.constantFrom<Json>({ isSuperuser: true }, 'x'))).map(([key, extra]) => ({
        describe: `${where}: extra field ${JSON.stringify(key)} = ${serialize(extra, true)}`,
        apply: (value) => setAt(value, [...path, key], extra),
      })),
    )
  }
  if (Array.isArray(current)) options.push(replace('object instead of array', fc.constantFrom<Json>({}, { 0: current[0] ?? 'x' })))
  if (path.length > 0) options.push(fc.constant({ describe: `${where}: removed`, apply: (value: Json) => setAt(value, path, undefined) }))
  return fc.oneof(...options)
}

/** 1 to 3 mutations at random positions of the value; positions are chosen on the original. */
export function mutate(base: Json): fc.Arbitrary<{ value: Json; mutations: string[] }> {
  const spots = positions(base)
  return fc.array(fc.constantFrom(...spots).chain((path) => mutationAt(base, path)), { minLength: 1, maxLength: 3 }).map((mutations) => {
    let value = base
    for (const mutation of mutations) {
      try {
        value = mutation.apply(value)
      } catch {
        // An earlier mutation removed the parent: this one no longer applies.
      }
    }
    return { value, mutations: mutations.map((mutation) => mutation.describe) }
  })
}

// ---------------------------------------------------------------------------------------------
// Raw bodies
// ---------------------------------------------------------------------------------------------

export interface Body {
  contentType?: string
  payload?: string | Buffer
  /** How to rebuild the payload: short enough to print, exact enough to reproduce. */
  recipe: string
}

/** Text labelled application/json that is not JSON (or is JSON of an unexpected kind). */
export const NOT_JSON = [
  '{',
  '{"a":1',
  "{'a':1}",
  '{a:1}',
  'undefined',
  'NaN',
  'Infinity',
  '-',
  '{"a":1}garbage',
  '{"a":1}{"b":2}',
  '{"a":1,}',
  '[1,]',
  '"\\ud800"',
  '"\\u0000"',
  '\u0000',
  ' ',
  '\ufeff{}',
  '{"a":"\\x41"}',
  '{"a":01}',
  '{"a":1e}',
  '{"a":.5}',
  '{"a":+1}',
  '{"__proto__":{"isSuperuser":true}}',
  '{"constructor":{"prototype":{"isSuperuser":true}}}',
  '{"a":1,"a":2}',
  'true',
  '"just a string"',
  '1e309',
  '1'.repeat(5000),
  '<?xml version="1.0"?><a/>',
  'a=1&b=2',
]

const nestedRaw = fc
  .tuple(fc.integer({ min: 500, max: 10_000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([depth, style]): Body => {
    const value = new Nested(depth, style)
    return { contentType: 'application/json', payload: serialize(value), recipe: serialize(value, true) }
  })

export const jsonBody = (value: Json, contentType = 'application/json'): Body => ({ contentType, payload: serialize(value), recipe: serialize(value, true) })

/** Bodies for an operation that takes JSON, from the schema's valid-looking values outwards. */
export function jsonBodies(base: fc.Arbitrary<unknown>): fc.Arbitrary<{ body: Body; notes: string[] }> {
  const valid = base as fc.Arbitrary<Json>
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((value) => ({ body: jsonBody(value), notes: ['valid-looking'] })) },
    { weight: 8, arbitrary: valid.chain(mutate).map(({ value, mutations }) => ({ body: jsonBody(value), notes: mutations })) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(valid.map((value): Json => [value]), fc.constantFrom<Json>(null, [], {}, 'x', 0, true, new RawToken('-0'), new RawToken('1e309')))
        .map((value) => ({ body: jsonBody(value), notes: ['other JSON at the root'] })),
    },
    { weight: 1, arbitrary: nestedRaw.map((body) => ({ body, notes: ['deep nesting'] })) },
    {
      weight: 2,
      arbitrary: fc.oneof(fc.constantFrom(...NOT_JSON), fc.string({ maxLength: 60, unit: 'binary' })).map((text) => ({
        body: { contentType: 'application/json', payload: text, recipe: JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text) },
        notes: ['not JSON'],
      })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Body>(
        { contentType: 'application/json', payload: '', recipe: '(empty)' },
        { recipe: '(no body, no content type)' },
        { contentType: 'application/json', payload: Buffer.from([0xff, 0xfe, 0x7b, 0x80, 0x7d]), recipe: 'bytes ff fe 7b 80 7d (invalid UTF-8)' },
        { contentType: 'application/json; charset=utf-16', payload: '{}', recipe: '{} as charset=utf-16' },
        { contentType: 'text/plain', payload: '{}', recipe: '{} as text/plain' },
        { contentType: 'application/x-www-form-urlencoded', payload: 'a=1&b=2', recipe: 'a=1&b=2 as form' },
        { contentType: 'multipart/form-data; boundary=x', payload: '--x--\r\n', recipe: 'empty multipart' },
        { contentType: 'application/json, text/html', payload: '{}', recipe: '{} with two content types' },
        { contentType: 'APPLICATION/JSON; charset="UTF-8"', payload: '{}', recipe: '{} with upper-case content type' },
      ).map((body) => ({ body, notes: ['odd content type or empty body'] })),
    },
  )
}

/** Bodies for an operation that takes none: often none, sometimes junk. */
export const bodiesForNoBody: fc.Arbitrary<{ body: Body; notes: string[] }> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ body: { recipe: '(no body)' }, notes: [] as string[] }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(fc.constantFrom<Json>(null, {}, [], { isSuperuser: true }, 'x'), nestedValue, edgeNumber)
      .map((value) => ({ body: jsonBody(value), notes: ['unexpected JSON body'] })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...NOT_JSON).map((text) => ({ body: { contentType: 'application/json', payload: text, recipe: JSON.stringify(text.slice(0, 200)) }, notes: ['not JSON'] })),
  },
)

// ---------------------------------------------------------------------------------------------
// Multipart
// ---------------------------------------------------------------------------------------------

type Part =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; content: Buffer; contentType: string }
  | { kind: 'raw'; text: string }

function partBytes(part: Part, boundary: string): Buffer {
  if (part.kind === 'raw') return Buffer.from(`--${boundary}\r\n${part.text}\r\n`, 'latin1')
  if (part.kind === 'field') return Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.contentType}\r\n\r\n`),
    part.content,
    Buffer.from('\r\n'),
  ])
}

const describePart = (part: Part): string =>
  part.kind === 'raw'
    ? `raw part ${JSON.stringify(part.text.slice(0, 80))}`
    : part.kind === 'field'
      ? `field ${JSON.stringify(part.name)}=${JSON.stringify(part.value.length > 60 ? `${part.value.slice(0, 60)}…<${part.value.length}>` : part.value)}`
      : `file ${JSON.stringify(part.name)} filename=${JSON.stringify(part.filename.slice(0, 80))} type=${JSON.stringify(part.contentType)} ${part.content.length} bytes`

const FIELD_NAMES = ['file', 'files', 'tag', 'avatar', 'image', 'banner', '', 'file[]', 'FILE', 'x'.repeat(200), 'fi"le', '__proto__']
const FILENAMES = ['a.png', '', '../../etc/passwd', '..\\..\\boot.ini', 'x'.repeat(600), 'ünï😀.png', 'a.png\u0000.exe', '%00.png', '.htaccess', 'a.svg', 'CON', 'a.png"; name="tag']
const PART_TYPES = ['image/png', 'image/jpeg', 'application/octet-stream', 'text/html', 'image/svg+xml', '', 'x'.repeat(300), 'image/png; charset=\u0000']
const TAGS = ['avatar', 'service_banner', 'service_gallery', 'id_document', 'order_delivery', 'unknown', '', 'x'.repeat(5000), '\u0000', 'avatar\u0000']

/** Garbage multipart/form-data: bad boundaries, truncated parts, wrong names, empty files. */
export function multipartBodies(png: Buffer): fc.Arbitrary<{ body: Body; notes: string[] }> {
  const content = fc.oneof(
    fc.constant(Buffer.alloc(0)),
    fc.constant(png),
    fc.constant(png.subarray(0, Math.floor(png.length / 2))),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc.constant(Buffer.concat([png.subarray(0, 16), Buffer.from('not really a png')])),
    fc.constant(Buffer.from('%PDF-1.4\n%garbage')),
    fc.constant(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')),
  )
  const part: fc.Arbitrary<Part> = fc.oneof(
    fc.record({
      kind: fc.constant('file' as const),
      name: fc.constantFrom(...FIELD_NAMES),
      filename: fc.constantFrom(...FILENAMES),
      content,
      contentType: fc.constantFrom(...PART_TYPES),
    }),
    fc.record({ kind: fc.constant('field' as const), name: fc.constantFrom(...FIELD_NAMES), value: fc.oneof(fc.constantFrom(...TAGS), fc.string({ maxLength: 40 })) }),
    fc.constantFrom<Part>(
      { kind: 'raw', text: 'Content-Type: image/png\r\n\r\nno disposition' },
      { kind: 'raw', text: 'Content-Disposition: form-data\r\n\r\nno name' },
      { kind: 'raw', text: 'Content-Disposition: attachment; name="file"; filename="a.png"\r\n\r\nxx' },
      { kind: 'raw', text: 'garbage without headers' },
      { kind: 'raw', text: `Content-Disposition: form-data; name="file"; filename="a.png"\r\n${'X-Junk: y\r\n'.repeat(150)}\r\nxx` },
      { kind: 'raw', text: 'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%E2%82%AC%00.png\r\n\r\nxx' },
    ),
  )
  const boundary = fc.constantFrom('----fuzz0123456789', 'x', 'a'.repeat(200), 'with space', '"quoted"', 'ünï', '--')
  return fc
    .record({
      parts: fc.array(part, { minLength: 0, maxLength: 4 }),
      extraFields: fc.constantFrom(0, 0, 0, 25, 40),
      boundary,
      header: fc.constantFrom('same', 'same', 'same', 'other', 'missing', 'empty', 'not multipart'),
      ending: fc.constantFrom('closed', 'closed', 'open', 'truncated', 'no trailing CRLF', 'garbage after'),
      truncateAt: fc.double({ min: 0, max: 1, noNaN: true }),
    })
    .map(({ parts, extraFields, boundary: bound, header, ending, truncateAt }) => {
      const all: Part[] = [...parts, ...Array.from({ length: extraFields }, (_, index): Part => ({ kind: 'field', name: `f${index}`, value: 'v' }))]
      let payload = Buffer.concat([...all.map((item) => partBytes(item, bound)), Buffer.from(ending === 'open' || ending === 'truncated' ? '' : `--${bound}--${ending === 'no trailing CRLF' ? '' : '\r\n'}`)])
      if (ending === 'truncated') payload = payload.subarray(0, Math.floor(payload.length * truncateAt))
      if (ending === 'garbage after') payload = Buffer.concat([payload, Buffer.from('\u0000\u0001 trailing garbage --x--')])
      const contentType =
        header === 'same'
          ? `multipart/form-data; boundary=${bound}`
          : header === 'other'
            ? 'multipart/form-data; boundary=not-the-one-used'
            : header === 'missing'
              ? 'multipart/form-data'
              : header === 'empty'
                ? 'multipart/form-data; boundary='
                : 'multipart/mixed; boundary=' + bound
      const recipe = `multipart (content-type ${JSON.stringify(contentType.slice(0, 90))}, ${payload.length} bytes, ending ${ending}${
        ending === 'truncated' ? ` at ${payload.length}` : ''
      }) parts: [${parts.map(describePart).join('; ')}]${extraFields ? ` + ${extraFields} fields f0..f${extraFields - 1}="v"` : ''}`
      return { body: { contentType, payload, recipe }, notes: ['garbage multipart'] }
    })
}

/** Not-multipart bodies sent to a multipart operation. */
export const wrongBodiesForMultipart: fc.Arbitrary<{ body: Body; notes: string[] }> = fc
  .constantFrom<Body>(
    { recipe: '(no body)' },
    { contentType: 'application/json', payload: '{"file":"x"}', recipe: '{"file":"x"} as JSON' },
    { contentType: 'application/json', payload: 'null', recipe: 'null as JSON' },
    { contentType: 'application/octet-stream', payload: Buffer.from('raw bytes'), recipe: 'raw bytes as octet-stream' },
    { contentType: 'image/png', payload: Buffer.from([0x89, 0x50, 0x4e, 0x47]), recipe: 'PNG signature as image/png' },
    { contentType: 'multipart/form-data; boundary=x', payload: '', recipe: 'empty multipart' },
  )
  .map((body) => ({ body, notes: ['not multipart'] }))
