import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, Page, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requirePermission, requireSuperuser } from '../../http/auth-hooks.ts'
import { ListUsersQuery, UserListItem, UserSchema as User } from '../users/users.module.ts'
import { adminErrors } from './admin.errors.ts'
import type { AdminService } from './admin.service.ts'
import { AdminUser, AdminUserDetail, AdminUsersQuery, CreateStaffBody, SetRolesBody, StaffUser, SuspendBody, UserIdParams } from './admin.schemas.ts'

const tags = ['admin']
const security = [{ bearerAuth: [] }]

type App = Parameters<FastifyPluginAsyncTypebox>[0]

export const adminRoutes: FastifyPluginAsyncTypebox<{ admin: AdminService }> = async (app, { admin }) => {
  // The groups register in this order: it is the order of the paths in the OpenAPI document and in clients/ts.
  staffRoutes(app, admin)
  activationRoutes(app, admin)
  userListRoutes(app, admin)
  suspensionRoutes(app, admin)
}

/** Staff accounts and their roles (superuser). */
function staffRoutes(app: App, admin: AdminService) {
  app.post(
    '/admin/staff',
    {
      preValidation: requireSuperuser,
      schema: {
        tags,
        security,
        summary: 'Create a staff account (superuser)',
        description: 'The account is created active and staff; `roleId` assigns its first role.',
        body: CreateStaffBody,
        response: responses({ 201: Envelope(StaffUser) }, 400, 401, 403),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await admin.createStaff(actorOf(request), request.body))),
  )

  app.put(
    '/admin/staff/:userId/roles',
    {
      preValidation: requireSuperuser,
      schema: {
        tags,
        security,
        summary: "Replace a staff member's roles (superuser)",
        params: UserIdParams,
        body: SetRolesBody,
        response: responses({ 200: Envelope(StaffUser) }, 400, 401, 403, 404, adminErrors.NOT_STAFF),
      },
    },
    async (request) => ok(await admin.setStaffRoles(actorOf(request), request.params.userId, request.body.roleIds)),
  )
}

/** Deactivating and reactivating a user (manage_users). */
function activationRoutes(app: App, admin: AdminService) {
  app.post(
    '/admin/users/:userId/deactivate',
    {
      preValidation: requirePermission('manage_users'),
      schema: {
        tags,
        security,
        summary: 'Deactivate a user (manage_users)',
        description: 'Users are never deleted. The account is refused at once, including tokens already issued.',
        params: UserIdParams,
        response: responses({ 200: Envelope(User) }, 401, 403, 404, adminErrors.CANNOT_MODIFY_SELF),
      },
    },
    async (request) => ok(await admin.deactivateUser(actorOf(request), request.params.userId)),
  )

  app.post(
    '/admin/users/:userId/reactivate',
    {
      preValidation: requirePermission('manage_users'),
      schema: {
        tags,
        security,
        summary: 'Reactivate a user (manage_users)',
        params: UserIdParams,
        response: responses({ 200: Envelope(User) }, 401, 403, 404, adminErrors.CANNOT_MODIFY_SELF),
      },
    },
    async (request) => ok(await admin.reactivateUser(actorOf(request), request.params.userId)),
  )
}

/** The users as staff list them (view_users). */
function userListRoutes(app: App, admin: AdminService) {
  app.get(
    '/users',
    {
      preValidation: requirePermission('view_users'),
      schema: {
        tags: ['users'],
        security,
        summary: 'List users (staff with view_users)',
        querystring: ListUsersQuery,
        response: responses({ 200: Envelope(Page(UserListItem)) }, 400, 401, 403),
      },
    },
    async (request) => {
      const { page, limit, search, isActive } = request.query
      return ok(await admin.listUsers({ search, isActive }, { page, limit }))
    },
  )

  app.get(
    '/admin/users',
    {
      preValidation: requirePermission('view_users'),
      schema: {
        tags,
        security,
        summary: 'Users for staff (view_users)',
        description: 'Filter by `role` (`client`, `staff`, `admin`), `status` (`active`, `inactive`, `suspended`) and `search` (e-mail, username or name fragment); oldest first.',
        querystring: AdminUsersQuery,
        response: responses({ 200: Envelope(Page(AdminUser)) }, 400, 401, 403),
      },
    },
    async (request) => {
      const { page, limit, role, status, search } = request.query
      return ok(await admin.listUsers({ role, status, search }, { page, limit }))
    },
  )

  app.get(
    '/admin/users/:userId',
    {
      preValidation: requirePermission('view_users'),
      schema: {
        tags,
        security,
        summary: 'One user for staff (view_users)',
        description: 'The account as `GET /admin/users` lists it (its suspension, its services count), with its staff roles.',
        params: UserIdParams,
        response: responses({ 200: Envelope(AdminUserDetail) }, 401, 403, 404),
      },
    },
    async (request) => ok(await admin.getUser(request.params.userId)),
  )
}

/** Suspending a user and lifting it (manage_users; staff accounts: superuser). */
function suspensionRoutes(app: App, admin: AdminService) {
  app.post(
    '/admin/users/:userId/suspend',
    {
      preValidation: requirePermission('manage_users'),
      schema: {
        tags,
        security,
        summary: 'Suspend a user (manage_users; staff accounts: superuser)',
        description: 'Locks the account out at once: its access tokens, refresh tokens and logins answer 401 from now on. Recorded in the audit log with the reason.',
        params: UserIdParams,
        body: SuspendBody,
        response: responses({ 200: Envelope(AdminUser) }, 400, 401, 403, 404, adminErrors.CANNOT_MODIFY_SELF, adminErrors.ALREADY_SUSPENDED),
      },
    },
    async (request) => ok(await admin.suspendUser(actorOf(request), request.params.userId, request.body.reason)),
  )

  app.post(
    '/admin/users/:userId/unsuspend',
    {
      preValidation: requirePermission('manage_users'),
      schema: {
        tags,
        security,
        summary: 'Lift a suspension (manage_users; staff accounts: superuser)',
        description: 'The user may log in again; tokens issued before the suspension stay refused.',
        params: UserIdParams,
        response: responses({ 200: Envelope(AdminUser) }, 401, 403, 404, adminErrors.CANNOT_MODIFY_SELF, adminErrors.NOT_SUSPENDED),
      },
    },
    async (request) => ok(await admin.unsuspendUser(actorOf(request), request.params.userId)),
  )
}