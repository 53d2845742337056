import { Writable } from 'node:stream'
import { and, eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentsForm, kycStep1 as step1Of, kycStep2 as step2Of, PERSONAL_DETAILS, submitKyc } from '../../../test/factories/kyc.ts'
import { html, pdf, png } from '../../../test/factories/files.ts'
import { createSuperuser, createUser, type TestUser } from '../../../test/factories/users.ts'
import { API, createTestApp, expectError, request, type TestContext } from '../../../test/setup/test-app.ts'
import { HOUR } from '../../lib/clock.ts'
import { outboxJobs } from '../../platform/outbox/outbox.table.ts'
import { auditLog } from '../audit/audit.table.ts'
import { uploads } from '../uploads/uploads.table.ts'
import { users } from '../users/users.table.ts'
import { kycSubmissions } from './kyc.table.ts'

const UNKNOWN_ID = '0190a000-0000-7000-8000-00000000abcd'

describe('seller KYC', () => {
  let ctx: TestContext
  let admin: TestUser
  let reviewer: TestUser
  let viewer: TestUser
  let outsider: TestUser
  const logs: string[] = []

  beforeAll(async () => {
    // Every log line of the file is kept, at the most verbose level, to prove identity data never reaches it.
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString())
        done()
      },
    })
    ctx = await createTestApp({ env: { LOG_LEVEL: 'trace' }, logStream })
    admin = await createSuperuser(ctx)
    reviewer = await createUser(ctx, { permissions: ['view_kyc', 'manage_kyc'] })
    viewer = await createUser(ctx, { permissions: ['view_kyc'] })
    outsider = await createUser(ctx, { permissions: ['view_users', 'manage_users', 'view_accounts', 'approve_withdrawals'] })
  })
  afterAll(() => ctx.close())

  const step1 = (token: string | undefined, payload: Record<string, unknown> = PERSONAL_DETAILS) => step1Of(ctx.app, token, payload)
  const step2 = (token: string | undefined, form: { payload: Buffer; headers: Record<string, string> }) => step2Of(ctx.app, token, form)
  const status = (token: string | undefined) => request(ctx.app, { method: 'GET', url: '/seller/kyc/status', token })
  const staffList = (token: string | undefined, query = '') => request(ctx.app, { method: 'GET', url: `/admin/kyc${query}`, token })
  const staffGet = (token: string | undefined, id: string) => request(ctx.app, { method: 'GET', url: `/admin/kyc/${id}`, token })
  const approve = (token: string | undefined, id: string) => request(ctx.app, { method: 'POST', url: `/admin/kyc/${id}/approve`, token })
  const reject = (token: string | undefined, id: string, payload: Record<string, unknown> = { reason: 'The photo is blurred' }) =>
    request(ctx.app, { method: 'POST', url: `/admin/kyc/${id}/reject`, token, payload })
  const submissionsOf = (userId: string) => ctx.database.db.select().from(kycSubmissions).where(eq(kycSubmissions.userId, userId))
  const documentRowsOf = (userId: string) =>
    ctx.database.db
      .select()
      .from(uploads)
      .where(and(eq(uploads.ownerId, userId), eq(uploads.tag, 'id_document')))
  const accountOf = async (userId: string) => (await ctx.database.db.select().from(users).where(eq(users.id, userId)))[0]!
  const auditOf = (targetId: string) => ctx.database.db.select().from(auditLog).where(eq(auditLog.targetId, targetId))
  const eventsOf = (submissionId: string, name: string) =>
    ctx.database.db.select().from(outboxJobs).where(and(eq(outboxJobs.topic, 'event'), sql`${outboxJobs.payload}->>'event' = ${name}`, sql`${outboxJobs.payload}->'data'->>'submissionId' = ${submissionId}`))
  const pathOf = (url: string) => new URL(url).pathname + new URL(url).search

  /** A date `years` years before the test clock's today, as `YYYY-MM-DD`, shifted by `days`. */
  const yearsAgo = (years: number, days = 0) => {
    const now = ctx.clock.now()
    const date = new Date(Date.UTC(now.getUTCFullYear() - years, now.getUTCMonth(), now.getUTCDate() + days))
    return date.toISOString().slice(0, 10)
  }

  describe('GET /seller/kyc/status', () => {
    it('answers not_started with both steps due for a user who never began', async () => {
      const seller = await createUser(ctx)
      const response = await status(seller.accessToken)
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toEqual({
        status: 'not_started',
        submissionId: null,
        submittedAt: null,
        reviewedAt: null,
        rejectionReason: null,
        due: ['personal_details', 'documents'],
        personalDetails: null,
        documentType: null,
        documents: [],
      })
    })

    it('answers 401 without a token', async () => {
      expectError(await status(undefined), 401, 'UNAUTHENTICATED')
    })
  })

  describe('POST /seller/kyc/step1', () => {
    it('keeps normalised personal details and moves to pending_documents with the documents due', async () => {
      const seller = await createUser(ctx)
      const response = await step1(seller.accessToken, { ...PERSONAL_DETAILS, firstName: '  Ada ', country: 'gb', phone: '+44 20 7183 8750' })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({
        status: 'pending_documents',
        due: ['documents'],
        submittedAt: null,
        personalDetails: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1990-05-17', country: 'GB', phone: '+442071838750' },
        documents: [],
      })
      const [row] = await submissionsOf(seller.user.id)
      expect(row).toMatchObject({ status: 'pending_documents', firstName: 'Ada', country: 'GB', phone: '+442071838750', dateOfBirth: '1990-05-17' })
      expect((await status(seller.accessToken)).json().data.status).toBe('pending_documents')
    })

    it('opens one submission when two step 1 requests race', async () => {
      const seller = await createUser(ctx)
      const answers = await Promise.all([step1(seller.accessToken), step1(seller.accessToken, { ...PERSONAL_DETAILS, lastName: 'King' })])
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200])
      expect(await submissionsOf(seller.user.id)).toHaveLength(1)
    })

    it('corrects the details while documents are still due, on the same submission', async () => {
      const seller = await createUser(ctx)
      await step1(seller.accessToken)
      const response = await step1(seller.accessToken, { ...PERSONAL_DETAILS, lastName: 'King' })
      expect(response.statusCode).toBe(200)
      const rows = await submissionsOf(seller.user.id)
      expect(rows).toHaveLength(1)
      expect(rows[0]!.lastName).toBe('King')
    })

    it('accepts someone who turns 18 today and refuses someone who turns 18 tomorrow (400 on dateOfBirth)', async () => {
      const adult = await createUser(ctx)
      expect((await step1(adult.accessToken, { ...PERSONAL_DETAILS, dateOfBirth: yearsAgo(18) })).statusCode).toBe(200)
      const minor = await createUser(ctx)
      expectError(await step1(minor.accessToken, { ...PERSONAL_DETAILS, dateOfBirth: yearsAgo(18, 1) }), 400, 'VALIDATION_ERROR', ['dateOfBirth'])
    })

    it.each([
      ['a date that is not YYYY-MM-DD', { dateOfBirth: '17/05/1990' }, 'dateOfBirth'],
      ['an impossible date (2023-02-30)', { dateOfBirth: '2023-02-30' }, 'dateOfBirth'],
      ['a 17-year-old', { dateOfBirth: 'SEVENTEEN' }, 'dateOfBirth'],
      ['an alpha-3 country (USA)', { country: 'USA' }, 'country'],
      ['a country that is no code (u1)', { country: 'u1' }, 'country'],
      ['an unassigned country code (XX)', { country: 'XX' }, 'country'],
      ['a phone in words', { phone: 'five five five one two' }, 'phone'],
      ['a phone of 16 digits', { phone: '+1234567890123456' }, 'phone'],
      ['a phone without its country code', { phone: '020 7183 8750' }, 'phone'],
      ['a missing first name', { firstName: undefined }, 'firstName'],
      ['a blank last name', { lastName: '   ' }, 'lastName'],
      ['a number as the phone', { phone: 442071838750 }, 'phone'],
      ['an unknown field', { nationality: 'British' }, 'nationality'],
    ])('refuses %s (400 naming the field) and records nothing', async (_label, change, field) => {
      const seller = await createUser(ctx)
      const body: Record<string, unknown> = { ...PERSONAL_DETAILS, ...change }
      if (body.dateOfBirth === 'SEVENTEEN') body.dateOfBirth = yearsAgo(17)
      const response = await step1(seller.accessToken, body)
      expectError(response, 400, 'VALIDATION_ERROR', [field])
      expect(await submissionsOf(seller.user.id)).toEqual([])
    })

    it('answers 401 without a token', async () => {
      expectError(await step1(undefined), 401, 'UNAUTHENTICATED')
    })
  })

  describe('POST /seller/kyc/step2', () => {
    it('refuses documents before step 1 (422 INVALID_TRANSITION) and stores nothing', async () => {
      const seller = await createUser(ctx)
      expectError(await step2(seller.accessToken, await documentsForm('passport')), 422, 'INVALID_TRANSITION')
      expect(await documentRowsOf(seller.user.id)).toEqual([])
      expect(await submissionsOf(seller.user.id)).toEqual([])
    })

    it.each([
      ['library_card', async () => documentsForm('library_card'), ['documentType']],
      ['no document type', async () => documentsForm(undefined), ['documentType']],
      ['an id card without its back', async () => documentsForm('id_card', { documentFront: await png(), selfie: await png({ seed: 3 }) }), ['documentBack']],
      ['a driving licence without its back', async () => documentsForm('driving_license', { documentFront: await png(), selfie: await png({ seed: 3 }) }), ['documentBack']],
      ['no selfie', async () => documentsForm('passport', { documentFront: await png() }), ['selfie']],
      ['no front', async () => documentsForm('passport', { selfie: await png() }), ['documentFront']],
      ['an HTML page named front.png', async () => documentsForm('passport', { documentFront: html(), selfie: await png() }), ['documentFront']],
      ['an HTML page as the selfie', async () => documentsForm('passport', { documentFront: await png(), selfie: html() }), ['selfie']],
    ])('refuses %s (400 naming the field) and keeps nothing', async (_label, form, fields) => {
      const seller = await createUser(ctx)
      await step1(seller.accessToken)
      expectError(await step2(seller.accessToken, await form()), 400, 'VALIDATION_ERROR', fields)
      expect(await documentRowsOf(seller.user.id)).toEqual([])
      expect((await submissionsOf(seller.user.id))[0]!.status).toBe('pending_documents')
    })

    it('refuses a file in a field the form does not have, and two fronts (400 on the field)', async () => {
      const seller = await createUser(ctx)
      await step1(seller.accessToken)
      const { multipart } = await import('../../../test/factories/files.ts')
      const image = await png()
      expectError(await step2(seller.accessToken, multipart([{ name: 'documentType', value: 'passport' }, { name: 'passportScan', filename: 'p.png', content: image, contentType: 'image/png' }])), 400, 'VALIDATION_ERROR', ['passportScan'])
      const twice = multipart([
        { name: 'documentType', value: 'passport' },
        { name: 'documentFront', filename: 'a.png', content: image },
        { name: 'documentFront', filename: 'b.png', content: image },
      ])
      expectError(await step2(seller.accessToken, twice), 400, 'VALIDATION_ERROR', ['documentFront'])
      expect(await documentRowsOf(seller.user.id)).toEqual([])
    })

    it('takes an id card (front, back, selfie) for review, with private documents behind signed links', async () => {
      const seller = await createUser(ctx)
      await step1(seller.accessToken)
      const response = await step2(seller.accessToken, await documentsForm('id_card'))
      expect(response.statusCode, response.body).toBe(200)
      const data = response.json().data
      expect(data).toMatchObject({ status: 'pending_review', due: [], documentType: 'id_card', submittedAt: ctx.clock.now().toISOString() })
      expect(data.documents.map((document: { side: string }) => document.side)).toEqual(['front', 'back', 'selfie'])
      for (const document of data.documents) expect(document.url).toMatch(/\/api\/v1\/uploads\/identity\/.+\?expires=\d+&signature=[\w-]+$/)
      const [row] = await submissionsOf(seller.user.id)
      expect(row).toMatchObject({ status: 'pending_review', documentType: 'id_card' })
      const files = await documentRowsOf(seller.user.id)
      expect(files.map((file) => file.id).sort()).toEqual([row!.documentFrontId, row!.documentBackId, row!.selfieId].sort())
      expect(files.every((file) => file.objectType === 'identity' && file.objectId === row!.id)).toBe(true)
    })

    it('takes a passport without a back, and a PDF as the front', async () => {
      const seller = await createUser(ctx)
      await step1(seller.accessToken)
      const response = await step2(seller.accessToken, await documentsForm('passport', { documentFront: pdf(), selfie: await png() }))
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data.documents.map((document: { side: string; mimetype: string }) => [document.side, document.mimetype])).toEqual([
        ['front', 'application/pdf'],
        ['selfie', 'image/png'],
      ])
    })

    it('refuses step 1 and step 2 while under review (422 INVALID_TRANSITION)', async () => {
      const seller = await createUser(ctx)
      await submitKyc(ctx.app, seller.accessToken)
      expectError(await step1(seller.accessToken), 422, 'INVALID_TRANSITION')
      expectError(await step2(seller.accessToken, await documentsForm('id_card')), 422, 'INVALID_TRANSITION')
      expect(await documentRowsOf(seller.user.id)).toHaveLength(3)
    })

    it('answers 401 without a token', async () => {
      expectError(await step2(undefined, await documentsForm('passport')), 401, 'UNAUTHENTICATED')
    })
  })

  describe('identity documents are never public', () => {
    it('serves them to the owner and to staff with view_kyc, and to nobody else without a signed link', async () => {
      const seller = await createUser(ctx)
      await submitKyc(ctx.app, seller.accessToken)
      const { documents } = (await status(seller.accessToken)).json().data
      const signed = pathOf(documents[0].url)
      const bare = new URL(documents[0].url).pathname
      const fetch = (url: string, token?: string) => ctx.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} })

      expect((await fetch(signed)).statusCode).toBe(200)
      expect((await fetch(bare, seller.accessToken)).statusCode).toBe(200)
      expect((await fetch(bare, viewer.accessToken)).statusCode).toBe(200)
      expect((await fetch(bare, admin.accessToken)).statusCode).toBe(200)
      expect((await fetch(bare)).statusCode).toBe(404)
      expect((await fetch(bare, outsider.accessToken)).statusCode).toBe(404)
      expect((await fetch(bare, (await createUser(ctx)).accessToken)).statusCode).toBe(404)
      expect(bare.startsWith(`${API}/uploads/identity/`)).toBe(true)

      // A signed link expires (SIGNED_URL_TTL_SECONDS, an hour by default).
      const now = ctx.clock.now()
      ctx.clock.advance(HOUR + 1000)
      try {
        expect((await fetch(signed)).statusCode).toBe(404)
      } finally {
        ctx.clock.set(now)
      }
    })
  })

  describe('GET /admin/kyc and /admin/kyc/{id}', () => {
    it('lists submissions by status, oldest first, with the personal details and signed document links (view_kyc)', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      const response = await staffList(viewer.accessToken, '?status=pending_review&limit=100')
      expect(response.statusCode).toBe(200)
      const { items, pagination } = response.json().data
      expect(pagination).toMatchObject({ page: 1, limit: 100 })
      expect(items.every((item: { status: string }) => item.status === 'pending_review')).toBe(true)
      const item = items.find((candidate: { id: string }) => candidate.id === submissionId)
      expect(item).toEqual({
        id: submissionId,
        userId: seller.user.id,
        user: { id: seller.user.id, fullName: seller.user.fullName, username: seller.user.username },
        status: 'pending_review',
        personalDetails: PERSONAL_DETAILS,
        documentType: 'id_card',
        documents: [expect.objectContaining({ side: 'front' }), expect.objectContaining({ side: 'back' }), expect.objectContaining({ side: 'selfie' })],
        submittedAt: expect.any(String),
        reviewedAt: null,
        reviewedBy: null,
        rejectionReason: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      })
      const document = await ctx.app.inject({ method: 'GET', url: pathOf(item.documents[0].url) })
      expect(document.statusCode).toBe(200)
      expect(document.headers['cache-control']).toBe('private, no-store')

      const one = await staffGet(viewer.accessToken, submissionId)
      expect(one.statusCode).toBe(200)
      expect(one.json().data).toMatchObject({ id: submissionId, personalDetails: PERSONAL_DETAILS })
    })

    it("lists one person's whole history with userId, and nothing of anyone else", async () => {
      const seller = await createUser(ctx)
      const other = await createUser(ctx)
      const first = await submitKyc(ctx.app, seller.accessToken)
      expect((await reject(reviewer.accessToken, first, { reason: 'The photo is blurred.' })).statusCode).toBe(200)
      const second = await submitKyc(ctx.app, seller.accessToken)
      await submitKyc(ctx.app, other.accessToken)
      const response = await staffList(viewer.accessToken, `?userId=${seller.user.id}`)
      expect(response.statusCode).toBe(200)
      const { items, pagination } = response.json().data
      expect(items.map((item: { id: string; status: string }) => [item.id, item.status])).toEqual([
        [first, 'rejected'],
        [second, 'pending_review'],
      ])
      expect(pagination.total).toBe(2)
      const pending = (await staffList(viewer.accessToken, `?userId=${seller.user.id}&status=rejected`)).json().data.items
      expect(pending.map((item: { id: string }) => item.id)).toEqual([first])
      expect((await staffList(viewer.accessToken, `?userId=${UNKNOWN_ID}`)).json().data.items).toEqual([])
    })

    it('answers 401 without a token, 403 without view_kyc, 404 for an unknown or malformed id', async () => {
      expectError(await staffList(undefined), 401, 'UNAUTHENTICATED')
      expectError(await staffList(outsider.accessToken), 403, 'FORBIDDEN')
      expectError(await staffList((await createUser(ctx)).accessToken), 403, 'FORBIDDEN')
      expectError(await staffGet(undefined, UNKNOWN_ID), 401, 'UNAUTHENTICATED')
      expectError(await staffGet(outsider.accessToken, UNKNOWN_ID), 403, 'FORBIDDEN')
      expectError(await staffGet(viewer.accessToken, UNKNOWN_ID), 404, 'NOT_FOUND')
      expectError(await staffGet(viewer.accessToken, 'not-an-id'), 404, 'NOT_FOUND')
    })

    it.each([
      ['an unknown status', '?status=verified', 'status'],
      ['limit=0', '?limit=0', 'limit'],
      ['an unknown filter', '?country=GB', 'country'],
      ['a userId that is not an id', '?userId=me', 'userId'],
    ])('refuses %s (400 naming it)', async (_label, query, field) => {
      expectError(await staffList(viewer.accessToken, query), 400, 'VALIDATION_ERROR', [field])
    })
  })

  describe('POST /admin/kyc/{id}/approve', () => {
    it('approves: the user becomes verified, is e-mailed, kyc.approved is emitted and the audit row names the request', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      const response = await approve(reviewer.accessToken, submissionId)
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({ id: submissionId, status: 'approved', reviewedBy: reviewer.user.id, reviewedAt: expect.any(String), rejectionReason: null })
      expect((await accountOf(seller.user.id)).isKycVerified).toBe(true)
      expect((await status(seller.accessToken)).json().data).toMatchObject({ status: 'approved', due: [], reviewedAt: expect.any(String) })
      expect((await request(ctx.app, { method: 'GET', url: '/users/me', token: seller.accessToken })).json().data.isKYCVerified).toBe(true)

      expect(await eventsOf(submissionId, 'kyc.approved')).toHaveLength(1)
      const [audit] = await auditOf(submissionId)
      expect(audit).toMatchObject({ action: 'kyc.approve', actorId: reviewer.user.id, targetType: 'kyc_submission', requestId: response.headers['x-request-id'], before: { status: 'pending_review' }, after: { status: 'approved', isKYCVerified: true } })
      // The audit row keeps no identity data.
      expect(JSON.stringify(audit)).not.toMatch(/Lovelace|1990-05-17|442071838750/)

      await ctx.app.container.worker.drain()
      const mail = ctx.mailer.sent.find((message) => message.to === seller.user.email)
      expect(mail?.subject).toBe('Your identity is verified')
      expect(mail?.text).not.toMatch(/Lovelace|1990-05-17|442071838750/)
    })

    it('refuses approving twice, or rejecting after approval (422 INVALID_TRANSITION), and changes nothing more', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      expect((await approve(reviewer.accessToken, submissionId)).statusCode).toBe(200)
      expectError(await approve(reviewer.accessToken, submissionId), 422, 'INVALID_TRANSITION')
      expectError(await reject(reviewer.accessToken, submissionId), 422, 'INVALID_TRANSITION')
      expect(await auditOf(submissionId)).toHaveLength(1)
      expect(await eventsOf(submissionId, 'kyc.approved')).toHaveLength(1)
      expectError(await step1(seller.accessToken), 422, 'INVALID_TRANSITION')
    })

    it('lets exactly one of an approval and a rejection at the same moment win', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      const answers = await Promise.all([approve(reviewer.accessToken, submissionId), reject(reviewer.accessToken, submissionId)])
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 422])
      const [row] = await submissionsOf(seller.user.id)
      expect((await accountOf(seller.user.id)).isKycVerified).toBe(row!.status === 'approved')
      expect(await auditOf(submissionId)).toHaveLength(1)
    })

    it('refuses a submission still waiting for documents (422)', async () => {
      const seller = await createUser(ctx)
      const submissionId = (await step1(seller.accessToken)).json().data.submissionId
      expectError(await approve(reviewer.accessToken, submissionId), 422, 'INVALID_TRANSITION')
      expect((await accountOf(seller.user.id)).isKycVerified).toBe(false)
    })

    it('answers 401 without a token, 403 with view_kyc only, 404 for an unknown id, and verifies nobody', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      expectError(await approve(undefined, submissionId), 401, 'UNAUTHENTICATED')
      expectError(await approve(viewer.accessToken, submissionId), 403, 'FORBIDDEN')
      expectError(await approve(seller.accessToken, submissionId), 403, 'FORBIDDEN')
      expectError(await approve(reviewer.accessToken, UNKNOWN_ID), 404, 'NOT_FOUND')
      expect((await accountOf(seller.user.id)).isKycVerified).toBe(false)
      expect(await auditOf(submissionId)).toEqual([])
    })
  })

  describe('POST /admin/kyc/{id}/reject', () => {
    it('rejects with a reason: the user stays unverified, is e-mailed the reason, and kyc.rejected is emitted and audited', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      const response = await reject(reviewer.accessToken, submissionId, { reason: '  The photo is blurred ' })
      expect(response.statusCode, response.body).toBe(200)
      expect(response.json().data).toMatchObject({ status: 'rejected', rejectionReason: 'The photo is blurred' })
      expect((await accountOf(seller.user.id)).isKycVerified).toBe(false)
      expect((await status(seller.accessToken)).json().data).toMatchObject({ status: 'rejected', rejectionReason: 'The photo is blurred', due: ['documents'] })
      expect(await eventsOf(submissionId, 'kyc.rejected')).toHaveLength(1)
      expect(await auditOf(submissionId)).toEqual([
        expect.objectContaining({ action: 'kyc.reject', actorId: reviewer.user.id, reason: 'The photo is blurred', requestId: response.headers['x-request-id'] }),
      ])
      await ctx.app.container.worker.drain()
      const mail = ctx.mailer.sent.find((message) => message.to === seller.user.email)
      expect(mail?.subject).toBe('We could not verify your identity')
      expect(mail?.text).toContain('The photo is blurred')
    })

    it.each([
      ['without a reason', {}],
      ['with a blank reason', { reason: '   ' }],
    ])('refuses rejecting %s (400 on reason) and changes nothing', async (_label, body) => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      expectError(await reject(reviewer.accessToken, submissionId, body), 400, 'VALIDATION_ERROR', ['reason'])
      expect((await submissionsOf(seller.user.id))[0]!.status).toBe('pending_review')
      expect(await auditOf(submissionId)).toEqual([])
    })

    it('lets a rejected user send new documents straight away: a new submission keeps the personal details', async () => {
      const seller = await createUser(ctx)
      const first = await submitKyc(ctx.app, seller.accessToken)
      await reject(reviewer.accessToken, first)
      const again = await step2(seller.accessToken, await documentsForm('passport', { documentFront: await png({ seed: 9 }), selfie: await png({ seed: 8 }) }))
      expect(again.statusCode, again.body).toBe(200)
      const data = again.json().data
      expect(data.submissionId).not.toBe(first)
      expect(data).toMatchObject({ status: 'pending_review', personalDetails: PERSONAL_DETAILS, documentType: 'passport' })
      const rows = await submissionsOf(seller.user.id)
      expect(rows.map((row) => row.status).sort()).toEqual(['pending_review', 'rejected'])
      // The rejected submission keeps its documents, on record with the decision.
      expect(await documentRowsOf(seller.user.id)).toHaveLength(5)
      expect((await approve(reviewer.accessToken, data.submissionId)).statusCode).toBe(200)
      expect((await accountOf(seller.user.id)).isKycVerified).toBe(true)
    })

    it('lets a rejected user start again from step 1', async () => {
      const seller = await createUser(ctx)
      const first = await submitKyc(ctx.app, seller.accessToken)
      await reject(reviewer.accessToken, first)
      const response = await step1(seller.accessToken, { ...PERSONAL_DETAILS, lastName: 'Byron' })
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toMatchObject({ status: 'pending_documents', personalDetails: { lastName: 'Byron' } })
      expect(response.json().data.submissionId).not.toBe(first)
    })

    it('answers 401 without a token, 403 without manage_kyc, 404 for an unknown id', async () => {
      const seller = await createUser(ctx)
      const submissionId = await submitKyc(ctx.app, seller.accessToken)
      expectError(await reject(undefined, submissionId), 401, 'UNAUTHENTICATED')
      expectError(await reject(viewer.accessToken, submissionId), 403, 'FORBIDDEN')
      expectError(await reject(reviewer.accessToken, UNKNOWN_ID), 404, 'NOT_FOUND')
      expect((await submissionsOf(seller.user.id))[0]!.status).toBe('pending_review')
    })
  })

  it('never writes identity data to the log, whatever the level', () => {
    const all = logs.join('')
    expect(all.length).toBeGreaterThan(0)
    for (const value of ['Lovelace', '1990-05-17', '442071838750', '+44 20 7183 8750']) expect(all).not.toContain(value)
  })
})
