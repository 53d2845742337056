import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, IdParams, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { withForm } from '../../http/multipart.ts'
import type { ProfileChanges } from './profiles.service.ts'
import type { UsersService } from './users.service.ts'
import { AvatarForm, Me, PublicProfile, UpdateMeBody, User } from './users.schemas.ts'

const tags = ['users']
const security = [{ bearerAuth: [] }]

/** Both spellings (Variant A and B, decision 0008) map onto one set of columns; `fullName` and `description` win when both spellings are sent. */
const toProfileChanges = (body: UpdateMeBody): ProfileChanges => {
  const fullName = body.fullName ?? body.name
  const description = body.description !== undefined ? body.description : body.bio
  return {
    ...(fullName !== undefined && { fullName: fullName.trim() }),
    ...(description !== undefined && { description }),
    ...(body.title !== undefined && { title: body.title }),
    ...(body.phone !== undefined && { phone: body.phone }),
    ...(body.username !== undefined && { username: body.username }),
    ...(body.avatar !== undefined && { avatar: body.avatar }),
  }
}

export const usersRoutes: FastifyPluginAsyncTypebox<{ users: UsersService; tmpDir: string }> = async (app, { users, tmpDir }) => {
  app.post(
    '/users/me/avatar',
    {
      preValidation: requireAuth,
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security,
        summary: 'Set the avatar',
        description: 'multipart/form-data with one `file`: JPEG or PNG, at most 5 MB. Replaces (and deletes) the previous avatar.',
        ...AvatarForm.schema,
        response: responses({ 200: Envelope(User) }, 400, 401, 415),
      },
    },
    async (request) =>
      ok(await withForm(request, AvatarForm, tmpDir, ({ files }) => users.setAvatar(actorOf(request), files[0]!))),
  )

  app.get(
    '/users/me',
    {
      preValidation: requireAuth,
      schema: { tags, security, summary: 'The current user', response: responses({ 200: Envelope(Me) }, 401) },
    },
    async (request) => ok(await users.getProfile(actorOf(request))),
  )

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/users/me',
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: method === 'PUT' ? 'Update the current user' : 'Update the current user (PATCH, same as PUT)',
        description: 'Both verbs accept both spellings: `name`/`fullName`, `bio`/`description`, plus `title` and `phone`. Only the fields sent change.',
        body: UpdateMeBody,
        response: responses({ 200: Envelope(User) }, 400, 401),
      },
      handler: async (request) => ok(await users.updateProfile(actorOf(request), toProfileChanges(request.body))),
    })
  }

  app.get(
    '/users/:userId',
    {
      schema: {
        tags,
        summary: 'Public profile of a user',
        description: 'Anyone may read it. Inactive or unknown users are 404.',
        params: IdParams('userId'),
        response: responses({ 200: Envelope(PublicProfile) }, 404),
      },
    },
    async (request) => ok(await users.getPublicProfile(request.params.userId)),
  )
}
