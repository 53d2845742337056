import { Type } from '@sinclair/typebox'
import { Id, MultipartForm, Nullable, Timestamp } from '../../http/common.schemas.ts'
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

export const FileQuery = Type.Object({
  expires: Type.Optional(Type.Integer({ minimum: 0, maximum: 99_999_999_999 })),
  signature: Type.Optional(Type.String({ maxLength: 100 })),
})

export const FileParams = Type.Object({ '*': Type.String({ maxLength: 500 }) })

export const UploadForm = {
  ...MultipartForm({ file: 'The file (exactly one).', tag: 'Optional: avatar, service_banner, service_gallery, id_document, business_document, order_delivery or chat_attachment.' }),
  examples: [{ tag: 'service_gallery' }],
}

export const FileBody = Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'The file bytes.' })

export const FileRedirect = Type.Null({
  description:
    'A private file in S3 storage, after the same checks: `Location` is a presigned URL, valid for one minute, where the bucket serves the bytes with the same type, disposition and caching, ranges and conditional requests included.',
})
