import { setTimeout as sleep } from 'node:timers/promises'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { and, eq } from 'drizzle-orm'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Session } from '../../access/access.ts'
import type { Database } from '../../db/client.ts'
import { guardTransactions } from '../../db/transaction-guard.ts'
import { requireAuth } from '../../http/auth-hooks.ts'
import { errorHandler } from '../../http/error-handler.ts'
import { validatorCompiler } from '../../http/validation.ts'
import { HOUR, ManualClock, SECOND } from '../../lib/clock.ts'
import { AppError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { expectError, openTestDatabase } from '../../../test/setup/test-app.ts'
import { IDEMPOTENCY_KEY_TTL_MS, idempotency, sweepExpiredIdempotencyKeys } from './idempotency.ts'
import { idempotencyKeys } from './idempotency.table.ts'

const sessionOf = (userId: string): Session => ({
  actor: { id: userId, email: `${userId}@example.test`, fullName: 'Test User', isStaff: false, isSuperuser: false, permissions: new Set() },
  jti: newId(),
  familyId: newId(),
  expiresAt: new Date(Date.now() + HOUR),
})

interface Thing {
  id: string
  amount: number
  n: number
}

/** A handler run that waits until the test lets it finish (to hold a key in progress). */
interface Hold {
  entered: () => void
  released: Promise<void>
}

describe('idempotency keys', () => {
  let database: Database
  let drop: () => Promise<void>
  let app: FastifyInstance
  const clock = new ManualClock('2030-01-01T00:00:00Z')
  let runs = 0
  let hold: Hold | undefined
  let handlerDelayMs = 0

  beforeAll(async () => {
    ;({ database, drop } = await openTestDatabase())

    // The platform part of buildApp that the plugin relies on: validation, the error envelope,
    // and a session set by an onRequest hook (here from a test header instead of a token).
    app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>()
    app.setValidatorCompiler(validatorCompiler)
    app.setErrorHandler(errorHandler)
    app.decorateRequest('session', null)
    app.decorateRequest('authError', null)
    app.addHook('onRequest', async (request) => {
      const user = request.headers['x-test-user']
      if (typeof user === 'string') request.session = sessionOf(user)
    })
    // Guarded as the container hands it out: a query on the outer handle inside the claim's
    // transaction would fail the test instead of hanging PGlite.
    await app.register(idempotency, { db: guardTransactions(database.db), clock })

    const body = Type.Object({ amount: Type.Number() }, { additionalProperties: false })
    app.register(async (child) => {
      const typed = child.withTypeProvider<TypeBoxTypeProvider>()
      typed.post('/things', { config: { idempotent: true }, preValidation: requireAuth, schema: { body } }, async (request, reply) => {
        runs++
        const n = runs
        if (hold) {
          hold.entered()
          await hold.released
        }
        if (handlerDelayMs > 0) await sleep(handlerDelayMs)
        if (request.body.amount === 13) throw new Error('the handler broke')
        if (request.body.amount === 7) throw new AppError(422, 'UNLUCKY_AMOUNT', 'Seven is not accepted')
        return reply.code(201).send({ id: newId(), amount: request.body.amount, n } satisfies Thing)
      })
      typed.post('/other-things', { config: { idempotent: true }, preValidation: requireAuth, schema: { body } }, async (request, reply) => {
        runs++
        return reply.code(201).send({ id: newId(), amount: request.body.amount, n: runs } satisfies Thing)
      })
      typed.post('/plain-things', { preValidation: requireAuth, schema: { body } }, async (request, reply) => {
        runs++
        return reply.code(201).send({ id: newId(), amount: request.body.amount, n: runs } satisfies Thing)
      })
    })
    await app.ready()
  })

  afterAll(async () => {
    await app?.close()
    await drop?.()
  })

  beforeEach(() => {
    hold = undefined
    handlerDelayMs = 0
  })

  const alice = newId()
  const bob = newId()

  function post(options: { amount?: unknown; key?: string; user?: string; url?: string; payload?: string }): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { 'x-test-user': options.user ?? alice, 'content-type': 'application/json' }
    if (options.key !== undefined) headers['idempotency-key'] = options.key
    return app.inject({ method: 'POST', url: options.url ?? '/things', headers, payload: options.payload ?? JSON.stringify({ amount: options.amount ?? 10 }) })
  }

  /** Makes the next handler run wait; resolves `entered` once it is inside the handler. */
  function holdNextRun(): { entered: Promise<void>; release: () => void } {
    let entered!: () => void
    let release!: () => void
    const enteredPromise = new Promise<void>((resolve) => (entered = resolve))
    hold = { entered, released: new Promise<void>((resolve) => (release = resolve)) }
    return { entered: enteredPromise, release }
  }

  const rowOf = async (userId: string, key: string) =>
    (await database.db.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key))))[0]

  const freshKey = () => `key-${newId()}`

  it('runs the handler every time when no Idempotency-Key is sent', async () => {
    const before = runs
    const first = await post({ amount: 10 })
    const second = await post({ amount: 10 })
    expect([first.statusCode, second.statusCode]).toEqual([201, 201])
    expect(first.json<Thing>().id).not.toBe(second.json<Thing>().id)
    expect(runs - before).toBe(2)
  })

  it('ignores the header on routes that did not opt in', async () => {
    const before = runs
    const key = freshKey()
    await post({ url: '/plain-things', key })
    const second = await post({ url: '/plain-things', key })
    expect(second.headers['idempotent-replayed']).toBeUndefined()
    expect(runs - before).toBe(2)
    expect(await rowOf(alice, key)).toBeUndefined()
  })

  it('replays the first answer byte for byte to a retry with the same key and body, without running the handler again', async () => {
    const before = runs
    const key = freshKey()
    const first = await post({ key, amount: 25 })
    expect(first.statusCode).toBe(201)
    expect(first.headers['idempotent-replayed']).toBeUndefined()

    // The same JSON with its keys reordered and spaced differently is the same request.
    const retry = await post({ key, payload: '{ "amount" : 25 }' })
    expect(retry.statusCode).toBe(201)
    expect(retry.body).toBe(first.body)
    expect(retry.headers['content-type']).toBe(first.headers['content-type'])
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(runs - before).toBe(1)
    expect(await rowOf(alice, key)).toMatchObject({ state: 'completed', responseStatus: 201, responseBody: first.body })
  })

  it('refuses the same key with another body (422 IDEMPOTENCY_KEY_REUSED) and keeps the first answer', async () => {
    const key = freshKey()
    const first = await post({ key, amount: 30 })
    const before = runs
    expectError(await post({ key, amount: 31 }), 422, 'IDEMPOTENCY_KEY_REUSED')
    expect(runs).toBe(before)
    expect((await post({ key, amount: 30 })).body).toBe(first.body)
  })

  it('refuses the same key on another route (422 IDEMPOTENCY_KEY_REUSED)', async () => {
    const key = freshKey()
    await post({ key, amount: 30 })
    const before = runs
    expectError(await post({ key, amount: 30, url: '/other-things' }), 422, 'IDEMPOTENCY_KEY_REUSED')
    expect(runs).toBe(before)
  })

  it('answers 409 IDEMPOTENCY_KEY_IN_USE while the first request with the key is still running, then replays its answer', async () => {
    const key = freshKey()
    const before = runs
    const { entered, release } = holdNextRun()
    const first = post({ key, amount: 40 })
    await entered
    hold = undefined

    // The claim was committed before the handler started: a second request sees it at once.
    expect(await rowOf(alice, key)).toMatchObject({ state: 'in_progress' })
    expectError(await post({ key, amount: 40 }), 409, 'IDEMPOTENCY_KEY_IN_USE')

    release()
    const answer = await first
    expect(answer.statusCode).toBe(201)
    const retry = await post({ key, amount: 40 })
    expect(retry.body).toBe(answer.body)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(runs - before).toBe(1)
  })

  it('runs the handler once for 50 concurrent requests with one key; every other answer is the same replay or 409', async () => {
    const key = freshKey()
    const before = runs
    handlerDelayMs = 50
    const answers = await Promise.all(Array.from({ length: 50 }, () => post({ key, amount: 50 })))
    handlerDelayMs = 0
    expect(runs - before).toBe(1)

    const originals = answers.filter((answer) => answer.statusCode === 201 && answer.headers['idempotent-replayed'] === undefined)
    expect(originals).toHaveLength(1)
    const original = originals[0]!
    for (const answer of answers) {
      if (answer.statusCode === 409) expectError(answer, 409, 'IDEMPOTENCY_KEY_IN_USE')
      else {
        expect(answer.statusCode, answer.body).toBe(201)
        expect(answer.body).toBe(original.body)
      }
    }
    // The handler was slow enough that the others really overlapped it.
    expect(answers.some((answer) => answer.statusCode === 409)).toBe(true)
    expect((await post({ key, amount: 50 })).body).toBe(original.body)
  })

  it('releases the key when the first answer is a 5xx, so the retry runs the handler again', async () => {
    const key = freshKey()
    const before = runs
    expectError(await post({ key, amount: 13 }), 500, 'INTERNAL_ERROR')
    expect(await rowOf(alice, key)).toBeUndefined()

    const retry = await post({ key, amount: 13 })
    expectError(retry, 500, 'INTERNAL_ERROR')
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    expect(runs - before).toBe(2)
  })

  it('replays a 4xx first answer like a success (the same request would fail the same way)', async () => {
    const key = freshKey()
    const before = runs
    const first = await post({ key, amount: 7 })
    expectError(first, 422, 'UNLUCKY_AMOUNT')

    const retry = await post({ key, amount: 7 })
    expect(retry.statusCode).toBe(422)
    expect(retry.body).toBe(first.body)
    expect(retry.headers['content-type']).toBe(first.headers['content-type'])
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(runs - before).toBe(1)
  })

  it('replays for 24 hours and treats the key as new once it has expired', async () => {
    const key = freshKey()
    const first = await post({ key, amount: 60 })

    clock.advance(IDEMPOTENCY_KEY_TTL_MS - SECOND)
    const stillReplayed = await post({ key, amount: 60 })
    expect(stillReplayed.headers['idempotent-replayed']).toBe('true')
    expect(stillReplayed.body).toBe(first.body)

    clock.advance(SECOND)
    const before = runs
    const again = await post({ key, amount: 60 })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(again.body).not.toBe(first.body)
    expect(runs - before).toBe(1)

    // The key now holds the new answer, for another 24 hours from now.
    expect((await post({ key, amount: 60 })).body).toBe(again.body)
    expect((await rowOf(alice, key))?.expiresAt).toEqual(new Date(clock.now().getTime() + IDEMPOTENCY_KEY_TTL_MS))
  })

  it('keeps keys per user: another user with the same key runs the handler', async () => {
    const key = freshKey()
    const mine = await post({ key, amount: 70 })
    const before = runs
    const theirs = await post({ key, amount: 70, user: bob })
    expect(theirs.statusCode).toBe(201)
    expect(theirs.headers['idempotent-replayed']).toBeUndefined()
    expect(theirs.body).not.toBe(mine.body)
    expect(runs - before).toBe(1)
  })

  it.each([
    ['empty', ''],
    ['256 characters long', 'k'.repeat(256)],
    ['holding a space', 'my key'],
    ['holding a tab', 'my\tkey'],
    ['holding a control character', 'my\u0001key'],
    ['holding DEL', 'my\u007fkey'],
  ])('refuses a key that is %s (400 on Idempotency-Key) without running the handler', async (_name, key) => {
    const before = runs
    expectError(await post({ key }), 400, 'VALIDATION_ERROR', ['Idempotency-Key'])
    expect(runs).toBe(before)
  })

  it('accepts a key of 255 visible ASCII characters', async () => {
    const key = '!~'.repeat(127) + 'z'
    expect((await post({ key, amount: 80 })).statusCode).toBe(201)
    expect((await post({ key, amount: 80 })).headers['idempotent-replayed']).toBe('true')
  })

  it('answers a malformed body 400 without using up the key', async () => {
    const key = freshKey()
    expectError(await post({ key, amount: 'ten' }), 400, 'VALIDATION_ERROR', ['amount'])
    expectError(await post({ key, payload: '{"amount": ' }), 400, 'VALIDATION_ERROR', ['body'])
    expect(await rowOf(alice, key)).toBeUndefined()

    const before = runs
    const valid = await post({ key, amount: 90 })
    expect(valid.statusCode).toBe(201)
    expect(valid.headers['idempotent-replayed']).toBeUndefined()
    expect(runs - before).toBe(1)
  })

  it('answers 401 before looking at the key when the caller is not authenticated', async () => {
    const response = await app.inject({ method: 'POST', url: '/things', headers: { 'idempotency-key': freshKey() }, payload: { amount: 1 } })
    expectError(response, 401, 'UNAUTHENTICATED')
  })

  it('sweeps only expired keys, in batches, and reports how many it deleted', async () => {
    const owner = newId()
    const now = clock.now()
    const at = (offsetMs: number) => new Date(now.getTime() + offsetMs)
    const row = (key: string, expiresAt: Date) => ({
      userId: owner,
      key,
      fingerprint: 'f'.repeat(64),
      state: 'completed' as const,
      responseStatus: 201,
      responseBody: '{}',
      responseContentType: 'application/json; charset=utf-8',
      createdAt: at(-IDEMPOTENCY_KEY_TTL_MS),
      expiresAt,
    })
    await database.db.insert(idempotencyKeys).values([
      row('expired-long-ago', at(-HOUR)),
      row('expired-just-now', at(0)),
      row('expired-a-second-ago', at(-SECOND)),
      { ...row('expired-in-progress', at(-SECOND)), state: 'in_progress', responseStatus: null, responseBody: null, responseContentType: null },
      row('live', at(SECOND)),
      row('live-for-a-day', at(IDEMPOTENCY_KEY_TTL_MS)),
    ])
    // Earlier tests left keys too (some expired by now, after the 24-hour test): all are counted.
    const all = await database.db.select({ key: idempotencyKeys.key, userId: idempotencyKeys.userId, expiresAt: idempotencyKeys.expiresAt }).from(idempotencyKeys)
    const expired = all.filter((key) => key.expiresAt <= now)
    expect(expired.length).toBeGreaterThan(3)

    expect(await sweepExpiredIdempotencyKeys(database.db, now, 3)).toBe(expired.length)
    const left = await database.db.select({ key: idempotencyKeys.key, userId: idempotencyKeys.userId, expiresAt: idempotencyKeys.expiresAt }).from(idempotencyKeys)
    expect(left.filter((key) => key.userId === owner).map((key) => key.key).sort()).toEqual(['live', 'live-for-a-day'])
    expect(left).toHaveLength(all.length - expired.length)
    expect(left.every((key) => key.expiresAt > now)).toBe(true)
    expect(await sweepExpiredIdempotencyKeys(database.db, now, 3)).toBe(0)
  })
})
