import type { Executor } from '../../db/client.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { KycStatus, KycSubmissionRow } from './kyc.table.ts'

/** The file fields of step 2, in the order their files are kept. */
export const DOCUMENT_FIELDS = ['documentFront', 'documentBack', 'selfie'] as const
export type DocumentField = (typeof DOCUMENT_FIELDS)[number]
const SIDE_OF: Record<DocumentField, 'front' | 'back' | 'selfie'> = { documentFront: 'front', documentBack: 'back', selfie: 'selfie' }

/** What the user still has to do, by status (`GET /seller/kyc/status`). */
const DUE: Record<KycStatus | 'not_started', ('personal_details' | 'documents')[]> = {
  not_started: ['personal_details', 'documents'],
  pending_documents: ['documents'],
  pending_review: [],
  approved: [],
  rejected: ['documents'],
}

export const personalDetailsOf = (row: KycSubmissionRow) => ({ firstName: row.firstName, lastName: row.lastName, dateOfBirth: row.dateOfBirth, country: row.country, phone: row.phone })

export interface ViewDeps {
  uploads: Pick<UploadsService, 'filesOf' | 'urlOf'>
  users: Pick<UsersService, 'publicSummariesOf'>
}

/** A submission as its owner sees it (with what is still due) and as staff see it. */
export function createKycViews(deps: ViewDeps) {
  const { uploads, users } = deps

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

  return {
    async statusView(executor: Executor, row: KycSubmissionRow | undefined) {
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
    },

    async staffViews(executor: Executor, rows: KycSubmissionRow[]) {
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
    },
  }
}

export type KycViews = ReturnType<typeof createKycViews>
