import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { sendFile } from '../../http/file-response.ts'
import { withForm } from '../../http/multipart.ts'
import type { UploadsService } from './uploads.service.ts'
import { FileBody, FileParams, FileQuery, FileRedirect, Upload, UploadForm } from './uploads.schemas.ts'

const tags = ['uploads']

export const uploadsRoutes: FastifyPluginAsyncTypebox<{ uploads: UploadsService; tmpDir: string }> = async (app, { uploads, tmpDir }) => {
  app.post(
    '/uploads',
    {
      preValidation: requireAuth,
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security: [{ bearerAuth: [] }],
        summary: 'Upload a file',
        description:
          'multipart/form-data with one `file` and an optional `tag`. The file is kept unattached until its id is sent in a field such as `avatar`; unattached files are deleted after 24 hours. Limits per tag: avatar 5 MB JPEG or PNG; service images 10 MB images; documents 10 MB images or PDF; deliveries and chat attachments 10 MB, any type.',
        ...UploadForm.schema,
        response: responses({ 201: Envelope(Upload) }, 400, 401, 415),
      },
    },
    async (request, reply) => {
      const upload = await withForm(request, UploadForm, tmpDir, ({ files, fields }) => uploads.createUpload(actorOf(request), files[0]!, fields.tag))
      return reply.status(201).send(ok(upload))
    },
  )

  app.get(
    '/uploads/*',
    {
      schema: {
        tags,
        summary: 'Download a file',
        description:
          'Public files (avatars, service images) are served to anyone. Private files (deliveries, chat attachments, identity documents) only to who may see them, by Bearer token or by the signed URL the API returned (`expires` and `signature`); to anyone else they do not exist (404). Supports `Range` with `If-Range`, `If-None-Match` and `If-Modified-Since`. With S3 storage a private file is a 302 to the bucket.',
        params: FileParams,
        querystring: FileQuery,
        response: responses({ 200: FileBody, 206: FileBody, 302: FileRedirect }, 404, 416),
      },
    },
    async (request, reply) => {
      const file = await uploads.openFile(request.params['*'], {
        actor: request.session?.actor ?? null,
        expires: request.query.expires,
        signature: request.query.signature,
      })
      return sendFile(request, reply, file)
    },
  )
}
