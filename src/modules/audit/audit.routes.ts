import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, Page, ok, responses } from '../../http/common.schemas.ts'
import { requireSuperuser } from '../../http/auth-hooks.ts'
import { AuditEntry, AuditQuery } from './audit.schemas.ts'
import type { AuditService } from './audit.service.ts'

export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/admin/audit',
    {
      preValidation: requireSuperuser,
      schema: {
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        summary: 'The audit log of staff actions (superuser)',
        description: 'Newest first. Filter by `actor` (staff id), `target` (object id), `targetType` and `action`. Rows are never changed or deleted.',
        querystring: AuditQuery,
        response: responses({ 200: Envelope(Page(AuditEntry)) }, 400, 401, 403),
      },
    },
    async (request) => {
      const { page, limit, actor, target, targetType, action } = request.query
      return ok(await audit.listEntries({ actorId: actor, targetId: target, targetType, action }, { page, limit }))
    },
  )
}
