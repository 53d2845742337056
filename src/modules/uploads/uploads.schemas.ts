import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { defineForm } from '../../http/multipart.ts'
import { MAX_UPLOAD_BYTES } from './upload-rules.ts'
import { uploadObjectTypes, uploadTags } from './uploads.table.ts'

export const UploadTagSchema = Type.Union(
  uploadTags.map((tag) => Type.Literal(tag)),
  { errorMessage: `must be one of ${uploadTags.join(', ')}` },
)

export const Upload = Type.Object({
  id: Id,
  filename: Type.String({ description: 'The original name, for display only.' }),
  size: Type.Integer({ description: 'Bytes.' }),
  mimetype: Type.String({ description: 'Detected from the content, not from the name.' }),
  url: Type.String({ description: 'Public files: a permanent URL. Private files: a signed URL that expires.' }),
  tag: Nullable(UploadTagSchema),
  objectType: Nullable(Type.Union(uploadObjectTypes.map((type) => Type.Literal(type)))),
  objectId: Nullable(Id),
  order: Type.Integer(),
  createdAt: Timestamp,
})

/** A public file as other modules' answers list it (a service's gallery), built by the uploads module's SQL (`publicFilesJsonSql`). */
export const PublicFile = Type.Object({ id: Id, url: Type.String(), order: Type.Integer() })
export type PublicFile = Static<typeof PublicFile>

/**
 * A file as other modules' answers show it (a chat attachment, an order's delivery, a KYC
 * document): its name, size, detected type and a link the uploads module signs (`urlOf`).
 */
export const FileReference = Type.Object({
  id: Id,
  filename: Type.String({ description: 'The original name, for display only.' }),
  size: Type.Integer({ description: 'Bytes.' }),
  mimetype: Type.String({ description: 'Detected from the bytes.' }),
  url: Type.String({ description: 'A signed link that expires (SIGNED_URL_TTL_SECONDS).' }),
})

export const FileQuery = Type.Object({
  expires: Type.Optional(Type.Integer({ minimum: 0, maximum: 99_999_999_999 })),
  signature: Type.Optional(Type.String({ maxLength: 100 })),
})

export const FileParams = Type.Object({ '*': Type.String({ maxLength: 500 }) })

export const UploadForm = defineForm({
  fields: {
    tag: Type.Optional(
      StringEnum(uploadTags, {
        description: 'What the file is for: its type and size are checked against the tag now. Without a tag they are checked when the upload is bound (sent in a field such as `avatar`).',
        examples: ['service_gallery'],
      }),
    ),
  },
  files: { file: { description: 'The file (exactly one).', maxBytes: MAX_UPLOAD_BYTES } },
})

export const FileBody = Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'The file bytes.' })

export const FileRedirect = Type.Null({
  description:
    'A private file in S3 storage, after the same checks: `Location` is a presigned URL, valid for one minute, where the bucket serves the bytes with the same type, disposition and caching, ranges and conditional requests included.',
})
