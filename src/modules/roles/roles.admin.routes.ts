import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, IdParams, Message, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireSuperuser } from '../../http/auth-hooks.ts'
import type { RolesService } from './roles.service.ts'
import { CreateRoleBody, Role, UpdateRoleBody } from './roles.schemas.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]
const RoleParams = IdParams('roleId')

export const rolesAdminRoutes: FastifyPluginAsyncTypebox<{ roles: RolesService }> = async (app, { roles }) => {
  app.addHook('preValidation', requireSuperuser)

  app.get(
    '/admin/roles',
    { schema: { tags, security, summary: 'List roles (superuser)', response: responses({ 200: Envelope(Type.Array(Role)) }, 401, 403) } },
    async () => ok(await roles.listRoles()),
  )

  app.get(
    '/admin/roles/:roleId',
    { schema: { tags, security, summary: 'One role (superuser)', params: RoleParams, response: responses({ 200: Envelope(Role) }, 401, 403, 404) } },
    async (request) => ok(await roles.getRole(request.params.roleId)),
  )

  app.post(
    '/admin/roles',
    {
      schema: {
        tags,
        security,
        summary: 'Create a role (superuser)',
        description: 'A role is a named list of permissions; staff get the union of their roles.',
        body: CreateRoleBody,
        response: responses({ 201: Envelope(Role) }, 400, 401, 403),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await roles.createRole(actorOf(request), request.body))),
  )

  app.put(
    '/admin/roles/:roleId',
    {
      schema: {
        tags,
        security,
        summary: 'Rename a role or change its permissions (superuser)',
        params: RoleParams,
        body: UpdateRoleBody,
        response: responses({ 200: Envelope(Role) }, 400, 401, 403, 404),
      },
    },
    async (request) => ok(await roles.updateRole(actorOf(request), request.params.roleId, request.body)),
  )

  app.delete(
    '/admin/roles/:roleId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete a role (superuser)',
        description: 'Staff who held it lose its permissions at once.',
        params: RoleParams,
        response: responses({ 200: Envelope(Message) }, 401, 403, 404),
      },
    },
    async (request) => {
      await roles.deleteRole(actorOf(request), request.params.roleId)
      return ok({ message: 'Role deleted' })
    },
  )
}
