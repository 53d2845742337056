import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Envelope, ok, responses } from '../../http/common.schemas.ts'
import { requireSuperuser } from '../../http/auth-hooks.ts'
import type { LedgerCheck as LedgerCheckResult } from './ledger.service.ts'
import { LedgerCheck } from './wallet.schemas.ts'

/** `/admin/ledger`: reconciliation for a finance person (superuser). */
export const ledgerAdminRoutes: FastifyPluginAsyncTypebox<{ check: () => Promise<LedgerCheckResult> }> = async (app, { check }) => {
  app.get(
    '/admin/ledger/check',
    {
      preValidation: requireSuperuser,
      schema: {
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        summary: 'Check that the books balance (superuser)',
        description:
          'Every ledger transaction must sum to zero, every account balance must equal the sum of its entries, and every clearing balance what its user’s earnings still clearing hold (`clearing_mismatch` otherwise). Also `npm run cli -- ledger:check`.',
        response: responses({ 200: Envelope(LedgerCheck) }, 401, 403),
      },
    },
    async () => ok(await check()),
  )
}
