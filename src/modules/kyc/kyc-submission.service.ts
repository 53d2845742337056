import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, validationError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { StoredFile, UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { checkPersonalDetails, type PersonalDetailsInput } from './kyc-rules.ts'
import { DOCUMENT_FIELDS, personalDetailsOf, type DocumentField, type KycViews } from './kyc-views.ts'
import { kycInvalidTransition } from './kyc.errors.ts'
import { createKycRepository } from './kyc.repository.ts'
import type { DocumentType, KycSubmissionRow } from './kyc.table.ts'

export interface DocumentsInput {
  fields: { documentType: DocumentType }
  files: (StagedFile & { field: string })[]
}

export interface SubmissionDeps {
  db: Db
  clock: Clock
  users: Pick<UsersService, 'lockAccount'>
  uploads: Pick<UploadsService, 'storeFiles' | 'recordFiles' | 'discardFiles'>
  views: Pick<KycViews, 'statusView'>
}

const identitySlot = (submissionId: string) => ({ objectType: 'identity', objectId: submissionId, tag: 'id_document' }) as const

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

/**
 * The seller's side: step 1 (personal details) and step 2 (documents). Each user's steps run
 * under their account's row lock, so two steps at once cannot both pass the status check.
 */
export function createKycSubmission(deps: SubmissionDeps) {
  const { db, clock, users, uploads, views } = deps

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

  return {
    /** `GET /seller/kyc/status`: the caller's newest submission, and what is still due. */
    async getStatus(actor: Actor) {
      return views.statusView(db, await createKycRepository(db).findLatestByUser(actor.id))
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
        return views.statusView(tx, row)
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
          return views.statusView(tx, row)
        })
      } catch (error) {
        await uploads.discardFiles(stored.map((entry) => entry.stored))
        throw error
      }
    },
  }
}
