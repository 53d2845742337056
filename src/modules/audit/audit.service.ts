import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { createAuditRepository, type AuditFilter } from './audit.repository.ts'
import type { AuditRow } from './audit.table.ts'

/** One staff action, as the module that performs it describes it. */
export interface AuditEntry {
  /** `<target>.<verb>`, e.g. `user.suspend`, `kyc.approve`, `payout.reject`. */
  action: string
  /** Who acted; its `requestId`, when it acts through a request, is recorded with the row. */
  actor: Pick<Actor, 'id' | 'requestId'> | null
  targetType: string
  targetId: string
  reason?: string | null
  /** The fields the action changed, before and after (never secrets or identity data). */
  before?: Record<string, unknown> | null
  after?: Record<string, unknown> | null
}

const toAuditEntry = (row: AuditRow) => ({
  id: row.id,
  action: row.action,
  actorId: row.actorId,
  targetType: row.targetType,
  targetId: row.targetId,
  reason: row.reason,
  before: row.before,
  after: row.after,
  requestId: row.requestId,
  createdAt: row.createdAt.toISOString(),
})

/** The audit log: other modules `record` in their own transaction; a superuser reads it. */
export function createAuditService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps

  return {
    /**
     * Writes the row in the caller's transaction, so it exists if and only if the action
     * commits. The request id is the actor's (null for the worker and the CLI).
     */
    async record(tx: Tx, entry: AuditEntry): Promise<void> {
      await createAuditRepository(tx).insert({
        id: newId(),
        action: entry.action,
        actorId: entry.actor?.id ?? null,
        targetType: entry.targetType,
        targetId: entry.targetId,
        reason: entry.reason ?? null,
        before: entry.before ?? null,
        after: entry.after ?? null,
        requestId: entry.actor?.requestId ?? null,
        createdAt: clock.now(),
      })
    },

    /** `GET /admin/audit` (superuser): newest first. */
    async listEntries(filter: AuditFilter, page: PageRequest) {
      const { rows, total } = await createAuditRepository(db).list(filter, offsetOf(page), page.limit)
      return toPage(rows.map(toAuditEntry), total, page)
    },
  }
}

export type AuditService = ReturnType<typeof createAuditService>
