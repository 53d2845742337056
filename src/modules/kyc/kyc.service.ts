import { Type, type Static } from '@sinclair/typebox'
import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, notFound, validationError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { Mailer } from '../../platform/mail/mailer.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import { defineStats } from '../../platform/statistics/statistics.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { StoredFile, UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { kycDecisionEmail } from './kyc-emails.ts'
import { checkPersonalDetails, type PersonalDetailsInput } from './kyc-rules.ts'
import { kycInvalidTransition } from './kyc.errors.ts'
import { kycEvents } from './kyc.events.ts'
import { createKycRepository } from './kyc.repository.ts'
import { KycStats } from './kyc.schemas.ts'
import type { DocumentType, KycStatus, KycSubmissionRow } from './kyc.table.ts'

export const KYC_MAIL_JOB = defineJob('mail.kyc_decision', Type.Object({ submissionId: Type.String() }))
export type KycMailJob = Static<typeof KYC_MAIL_JOB.payload>

/** The file fields of step 2, in the order their files are kept. */
export const DOCUMENT_FIELDS = ['documentFront', 'documentBack', 'selfie'] as const
type DocumentField = (typeof DOCUMENT_FIELDS)[number]
const SIDE_OF: Record<DocumentField, 'front' | 'back' | 'selfie'> = { documentFront: 'front', documentBack: 'back', selfie: 'selfie' }

export interface DocumentsInput {
  fields: { documentType: DocumentType }
  files: (StagedFile & { field: string })[]
}

/** What the user still has to do, by status (`GET /seller/kyc/status`). */
const DUE: Record<KycStatus | 'not_started', ('personal_details' | 'documents')[]> = {
  not_started: ['personal_details', 'documents'],
  pending_documents: ['documents'],
  pending_review: [],
  approved: [],
  rejected: ['documents'],
}

const identitySlot = (submissionId: string) => ({ objectType: 'identity', objectId: submissionId, tag: 'id_document' }) as const

type KycUploads = Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles' | 'filesOf' | 'urlOf' | 'registerAccessPolicy'>

/**
 * Seller identity verification (decision 0043): step 1 (personal details), step 2 (documents),
 * and the staff decision, which sets `isKYCVerified` on approval. Each user's KYC steps run under
 * their account's row lock, so two steps at once cannot both pass the status check.
 */
export function createKycService(deps: {
  db: Db
  clock: Clock
  outbox: Outbox
  mailer: Mailer
  users: Pick<UsersService, 'lockAccount' | 'updateAccount' | 'findAccountById' | 'publicSummariesOf'>
  uploads: KycUploads
  audit: Pick<AuditService, 'record'>
}) {
  const { db, clock, outbox, mailer, users, uploads, audit } = deps

  // The documents' object is the submission: its owner may read them (staff read them with view_kyc).
  uploads.registerAccessPolicy('identity', async (submissionId, actor) => (await createKycRepository(db).findById(submissionId))?.userId === actor.id)

  /** The documents of many submissions with their signed, expiring links: one query. */
  async function documentsOf(executor: Executor, rows: KycSubmissionRow[]) {
    const files = await uploads.filesOf(
      executor,
      'identity',
      rows.map((row) => row.id),
      'id_document',
    )
    const byId = new Map(files.map((file) => [file.id, file]))
    return (row: KycSubmissionRow) =>
      DOCUMENT_FIELDS.flatMap((field) => {
        const id = { documentFront: row.documentFrontId, documentBack: row.documentBackId, selfie: row.selfieId }[field]
        const file = id ? byId.get(id) : undefined
        return file ? [{ id: file.id, side: SIDE_OF[field], url: uploads.urlOf(file), filename: file.filename, mimetype: file.mimetype, size: file.size }] : []
      })
  }

  const personalDetailsOf = (row: KycSubmissionRow) => ({ firstName: row.firstName, lastName: row.lastName, dateOfBirth: row.dateOfBirth, country: row.country, phone: row.phone })

  async function statusView(executor: Executor, row: KycSubmissionRow | undefined) {
    if (!row) {
      return { status: 'not_started' as const, submissionId: null, submittedAt: null, reviewedAt: null, rejectionReason: null, due: DUE.not_started, personalDetails: null, documentType: null, documents: [] }
    }
    const documents = await documentsOf(executor, [row])
    return {
      status: row.status,
      submissionId: row.id,
      submittedAt: row.submittedAt?.toISOString() ?? null,
      reviewedAt: row.reviewedAt?.toISOString() ?? null,
      rejectionReason: row.rejectionReason,
      due: DUE[row.status],
      personalDetails: personalDetailsOf(row),
      documentType: row.documentType,
      documents: documents(row),
    }
  }

  async function staffViews(executor: Executor, rows: KycSubmissionRow[]) {
    const [documents, people] = await Promise.all([
      documentsOf(executor, rows),
      users.publicSummariesOf(
        executor,
        rows.map((row) => row.userId),
      ),
    ])
    return rows.map((row) => {
      const person = people.get(row.userId)
      return {
        id: row.id,
        userId: row.userId,
        user: person ? { id: person.id, fullName: person.fullName, username: person.username } : null,
        status: row.status,
        personalDetails: personalDetailsOf(row),
        documentType: row.documentType,
        documents: documents(row),
        submittedAt: row.submittedAt?.toISOString() ?? null,
        reviewedAt: row.reviewedAt?.toISOString() ?? null,
        reviewedBy: row.reviewedBy,
        rejectionReason: row.rejectionReason,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
      }
    })
  }

  /** Step 2's form, checked before any byte is stored: the back, which every document but a passport needs (the form requires the rest). */
  function checkDocumentsForm(input: DocumentsInput): { documentType: DocumentType; files: Map<DocumentField, StagedFile> } {
    const { documentType } = input.fields
    const files = new Map(input.files.map((file) => [file.field as DocumentField, file]))
    if (!files.has('documentBack') && documentType !== 'passport') {
      throw fieldError('documentBack', `is required for ${documentType === 'id_card' ? 'an id_card' : `a ${documentType}`}: the back of the document`)
    }
    return { documentType, files }
  }

  /** Where step 2 may start from: personal details given (pending_documents) or a rejected submission to submit again. */
  function assertDocumentsDue(row: KycSubmissionRow | undefined): asserts row is KycSubmissionRow {
    if (!row) throw kycInvalidTransition('Send your personal details (step 1) before your documents')
    if (row.status === 'pending_review') throw kycInvalidTransition('Your documents are being reviewed already')
    if (row.status === 'approved') throw kycInvalidTransition('Your identity is verified already')
  }

  /** Stores each file under its own field (a refused file is a 400 on that field), all or none. */
  async function storeDocuments(actor: Actor, submissionId: string, files: Map<DocumentField, StagedFile>): Promise<{ field: DocumentField; stored: StoredFile }[]> {
    const stored: { field: DocumentField; stored: StoredFile }[] = []
    try {
      for (const field of DOCUMENT_FIELDS) {
        const file = files.get(field)
        if (file) stored.push({ field, stored: (await uploads.storeFiles(actor, [file], identitySlot(submissionId), field))[0]! })
      }
      return stored
    } catch (error) {
      await uploads.discardFiles(stored.map((entry) => entry.stored))
      throw error
    }
  }

  /** Approves or rejects a submission awaiting review, with its e-mail, event and audit row, once. */
  function decide(actor: Actor, submissionId: string, approved: boolean, reason: string | null) {
    return db.transaction(async (tx) => {
      const kyc = createKycRepository(tx)
      const row = await kyc.lockById(submissionId)
      if (!row) throw notFound('KYC submission')
      if (row.status !== 'pending_review') throw kycInvalidTransition(`A submission that is ${row.status.replace('_', ' ')} cannot be ${approved ? 'approved' : 'rejected'}`)
      const now = clock.now()
      const status = approved ? 'approved' : 'rejected'
      const updated = await kyc.update(row.id, { status, rejectionReason: reason, reviewedAt: now, reviewedBy: actor.id, updatedAt: now })
      if (approved) await users.updateAccount(tx, row.userId, { isKycVerified: true })
      await outbox.add(tx, KYC_MAIL_JOB, { submissionId: row.id })
      await emitEvent(outbox, tx, approved ? kycEvents.kycApproved : kycEvents.kycRejected, { submissionId: row.id, userId: row.userId }, now)
      await audit.record(tx, {
        action: approved ? 'kyc.approve' : 'kyc.reject',
        actor,
        targetType: 'kyc_submission',
        targetId: row.id,
        reason,
        before: { status: row.status, userId: row.userId },
        after: { status, ...(approved && { isKYCVerified: true }) },
      })
      return (await staffViews(tx, [updated]))[0]!
    })
  }

  return {
    /** `GET /seller/kyc/status`: the caller's newest submission, and what is still due. */
    async getStatus(actor: Actor) {
      return statusView(db, await createKycRepository(db).findLatestByUser(actor.id))
    },

    /**
     * `POST /seller/kyc/step1`: personal details. Opens a submission (first time, or after a
     * rejection) or corrects the one waiting for documents; refused while one is under review or
     * once approved.
     */
    async submitPersonalDetails(actor: Actor, input: PersonalDetailsInput) {
      const checked = checkPersonalDetails(input, clock.now())
      if ('problems' in checked) throw validationError(checked.problems)
      const { details } = checked
      return db.transaction(async (tx) => {
        await users.lockAccount(tx, actor.id)
        const kyc = createKycRepository(tx)
        const current = await kyc.findLatestByUser(actor.id)
        if (current?.status === 'pending_review') throw kycInvalidTransition('Your submission is being reviewed: wait for the decision before changing it')
        if (current?.status === 'approved') throw kycInvalidTransition('Your identity is verified already')
        const now = clock.now()
        const row =
          current?.status === 'pending_documents'
            ? await kyc.update(current.id, { ...details, updatedAt: now })
            : await kyc.insert({ id: newId(), userId: actor.id, status: 'pending_documents', ...details, createdAt: now, updatedAt: now })
        return statusView(tx, row)
      })
    },

    /**
     * `POST /seller/kyc/step2`: the documents. The bytes are stored first (never inside a
     * transaction), then recorded with the submission in one transaction; they are deleted again
     * if it fails. After a rejection, a new submission keeps the previous personal details.
     */
    async submitDocuments(actor: Actor, input: DocumentsInput) {
      const { documentType, files } = checkDocumentsForm(input)
      const before = await createKycRepository(db).findLatestByUser(actor.id)
      assertDocumentsDue(before)
      const submissionId = before.status === 'rejected' ? newId() : before.id
      const stored = await storeDocuments(actor, submissionId, files)
      try {
        return await db.transaction(async (tx) => {
          await users.lockAccount(tx, actor.id)
          const kyc = createKycRepository(tx)
          const current = await kyc.findLatestByUser(actor.id)
          assertDocumentsDue(current)
          // Another step 1 or 2 committed since the files were stored: they belong to no submission now.
          if (current.id !== before.id || current.status !== before.status) throw kycInvalidTransition('Your submission changed meanwhile: send the documents again')
          const rows = await uploads.recordFiles(
            tx,
            stored.map((entry) => entry.stored),
            0,
          )
          const idOf = (field: DocumentField) => rows[stored.findIndex((entry) => entry.field === field)]?.id ?? null
          const now = clock.now()
          const documents = { documentType, documentFrontId: idOf('documentFront'), documentBackId: idOf('documentBack'), selfieId: idOf('selfie'), submittedAt: now, updatedAt: now }
          const row =
            current.status === 'rejected'
              ? await kyc.insert({ id: submissionId, userId: actor.id, status: 'pending_review', ...personalDetailsOf(current), ...documents, createdAt: now })
              : await kyc.update(current.id, { status: 'pending_review', ...documents })
          return statusView(tx, row)
        })
      } catch (error) {
        await uploads.discardFiles(stored.map((entry) => entry.stored))
        throw error
      }
    },

    /** `GET /admin/kyc?status=` (view_kyc): oldest first, with personal details and signed document links. */
    async listSubmissions(status: KycStatus | undefined, page: PageRequest) {
      const { rows, total } = await createKycRepository(db).list(status, offsetOf(page), page.limit)
      return toPage(await staffViews(db, rows), total, page)
    },

    /** `GET /admin/kyc/{id}` (view_kyc). */
    async getSubmission(submissionId: string) {
      const row = await createKycRepository(db).findById(submissionId)
      if (!row) throw notFound('KYC submission')
      return (await staffViews(db, [row]))[0]!
    },

    /** `POST /admin/kyc/{id}/approve` (manage_kyc): sets the user's `isKYCVerified`. */
    approveSubmission: (actor: Actor, submissionId: string) => decide(actor, submissionId, true, null),

    /** `POST /admin/kyc/{id}/reject` (manage_kyc): the reason is shown to the user. */
    rejectSubmission: (actor: Actor, submissionId: string, reason: string) => decide(actor, submissionId, false, reason.trim()),

    /** The worker's half of a decision: the e-mail to the user. */
    async sendDecisionEmail(job: KycMailJob): Promise<void> {
      const row = await createKycRepository(db).findById(job.submissionId)
      if (!row || (row.status !== 'approved' && row.status !== 'rejected')) return
      const user = await users.findAccountById(db, row.userId)
      if (!user) return
      await mailer.send(kycDecisionEmail(user, { approved: row.status === 'approved', reason: row.rejectionReason }))
    },

    /** The kyc section of `GET /admin/stats`: the review queue, counted on its index. */
    statistics: defineStats('kyc', KycStats, async (executor) => ({ pendingReview: await createKycRepository(executor).countByStatus('pending_review') })),
  }
}

export type KycService = ReturnType<typeof createKycService>
