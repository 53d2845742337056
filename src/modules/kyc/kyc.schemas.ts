import { Type, type Static } from '@sinclair/typebox'
import { Id, IdParams, Nullable, PageQuery, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { defineForm } from '../../http/multipart.ts'
import { FileReference, TAG_RULES } from '../uploads/uploads.module.ts'
import { UserSummary } from '../users/users.module.ts'
import { documentTypes, kycStatuses } from './kyc.table.ts'

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', errorMessage: 'must be 1 to 100 characters', description })

export const PersonalDetailsBody = Type.Object(
  {
    firstName: Name('As on the identity document.'),
    lastName: Name('As on the identity document.'),
    dateOfBirth: Type.String({
      format: 'date',
      maxLength: 10,
      // A real calendar date from 1900 on (the format refuses 2023-02-30).
      pattern: '^(19[0-9]{2}|[2-9][0-9]{3})-[0-9]{2}-[0-9]{2}$',
      errorMessage: 'must be a real date in the form YYYY-MM-DD, from 1900 on',
      description: '`YYYY-MM-DD`, from 1900 on; sellers must be at least 18.',
    }),
    country: Type.String({ minLength: 2, maxLength: 2, errorMessage: 'must be an ISO 3166-1 alpha-2 country code such as US or FR', description: 'ISO 3166-1 alpha-2 code, e.g. `FR`.' }),
    phone: Type.String({ minLength: 2, maxLength: 30, errorMessage: 'must be a valid phone number in international (E.164) form, such as +442071838750', description: 'International form, e.g. `+442071838750`; stored as E.164.' }),
  },
  { additionalProperties: false, examples: [{ firstName: 'María', lastName: 'González Ruiz', dateOfBirth: '1991-04-23', country: 'ES', phone: '+34612345678' }] },
)
export type PersonalDetailsBody = Static<typeof PersonalDetailsBody>

const documentFile = (description: string, optional = false) => ({ description: `${description} JPEG, PNG, WebP, GIF or PDF.`, maxBytes: TAG_RULES.id_document.maxBytes, optional })

export const DocumentsForm = defineForm({
  fields: { documentType: StringEnum(documentTypes, { description: 'The identity document sent.', examples: ['passport'] }) },
  files: {
    documentFront: documentFile('The front of the document.'),
    documentBack: documentFile('The back of the document: required for an id_card or a driving_license.', true),
    selfie: documentFile('A photo of your face.'),
  },
})

const PersonalDetails = Type.Object(
  { firstName: Type.String(), lastName: Type.String(), dateOfBirth: Type.String({ description: '`YYYY-MM-DD`.' }), country: Type.String(), phone: Type.String({ description: 'E.164.' }) },
  { description: 'Step 1. Personal data: shown only to its owner and to staff with view_kyc.' },
)

const KycStatusSchema = Type.Union(kycStatuses.map((status) => Type.Literal(status)))
const DocumentTypeSchema = Type.Union(documentTypes.map((type) => Type.Literal(type)))

const IdentityDocument = Type.Composite(
  [Type.Object({ side: Type.Union([Type.Literal('front'), Type.Literal('back'), Type.Literal('selfie')]) }), FileReference],
  { description: 'A document of the submission: the file is never public, its link is signed.' },
)

export const KycStatusView = Type.Object({
  status: Type.Union([Type.Literal('not_started'), ...kycStatuses.map((status) => Type.Literal(status))], {
    description: '`not_started` -> step 1 -> `pending_documents` -> step 2 -> `pending_review` -> `approved` or `rejected` (submit again from step 1 or 2).',
  }),
  submissionId: Nullable(Id),
  submittedAt: Nullable(Timestamp),
  reviewedAt: Nullable(Timestamp),
  rejectionReason: Nullable(Type.String()),
  due: Type.Array(Type.Union([Type.Literal('personal_details'), Type.Literal('documents')]), { description: 'What the user still has to send: `personal_details` (step 1), `documents` (step 2).' }),
  personalDetails: Nullable(PersonalDetails),
  documentType: Nullable(DocumentTypeSchema),
  documents: Type.Array(IdentityDocument),
})

export const KycSubmission = Type.Object({
  id: Id,
  userId: Id,
  user: Nullable(Type.Pick(UserSummary, ['id', 'fullName', 'username'])),
  status: KycStatusSchema,
  personalDetails: PersonalDetails,
  documentType: Nullable(DocumentTypeSchema),
  documents: Type.Array(IdentityDocument),
  submittedAt: Nullable(Timestamp),
  reviewedAt: Nullable(Timestamp),
  reviewedBy: Nullable(Id),
  rejectionReason: Nullable(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

export const KycSubmissionParams = IdParams('submissionId')

export const StaffKycQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      status: Type.Optional(Type.Union(kycStatuses.map((status) => Type.Literal(status)), { errorMessage: `must be one of ${kycStatuses.join(', ')}` })),
      userId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be a user id', description: "Only this person's submissions." })),
    }),
  ],
  { additionalProperties: false },
)

export const RejectKycBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', errorMessage: 'must be 1 to 500 characters', description: 'Shown to the user.' }) },
  { additionalProperties: false, examples: [{ reason: 'The photo of the document is blurred and the expiry date cannot be read. Please upload a sharper photo.' }] },
)

export const KycStats = Type.Object({ pendingReview: Type.Integer({ description: 'Submissions awaiting a staff decision.' }) })
