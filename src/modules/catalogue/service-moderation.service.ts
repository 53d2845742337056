import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { AuditService } from '../audit/audit.module.ts'
import { invalidTransition } from './catalogue.errors.ts'
import { catalogueEvents } from './catalogue.events.ts'
import type { ServiceBrowsing } from './service-browsing.service.ts'
import { isOwner } from './service-rules.ts'
import { createServicesRepository } from './services.repository.ts'
import type { ServiceRow, ServiceStatus } from './services.table.ts'

/** A service's status moves: staff approve or reject a pending one, its owner pauses and resumes it. */
export function createServiceModeration(deps: { db: Db; clock: Clock; outbox: Outbox; audit: Pick<AuditService, 'record'>; browsing: Pick<ServiceBrowsing, 'describe'> }) {
  const { db, clock, outbox, audit, browsing } = deps

  /** The audit row of a staff decision, in the transaction of the decision. */
  const recordDecision = (tx: Tx, actor: Actor, row: ServiceRow, from: ServiceStatus, reason?: string) =>
    audit.record(tx, {
      action: row.status === 'active' ? 'service.approve' : 'service.reject',
      actor,
      targetType: 'service',
      targetId: row.id,
      reason: reason ?? null,
      before: { status: from },
      after: { status: row.status },
    })

  /** Moves one live service from `from` to `to` under a row lock; `check` adds who may do it. */
  function transition(
    serviceId: string,
    move: { from: ServiceStatus; to: ServiceStatus; action: string; rejectionReason?: string },
    check: (row: ServiceRow) => void,
    after?: (tx: Tx, row: ServiceRow) => Promise<unknown>,
  ) {
    return db.transaction(async (tx) => {
      const repository = createServicesRepository(tx)
      const current = await repository.lockById(serviceId)
      if (!current) throw notFound('Service')
      check(current)
      if (current.status !== move.from) throw invalidTransition(current.status, move.action)
      const row = (await repository.update(serviceId, { status: move.to, rejectionReason: move.rejectionReason ?? null, updatedAt: clock.now() }))!
      await after?.(tx, row)
      return row
    })
  }

  const ownedBy = (actor: Actor) => (row: ServiceRow) => {
    if (!isOwner(row, actor)) throw notFound('Service')
  }
  const anyone = () => undefined

  return {
    pauseService: async (actor: Actor, serviceId: string) =>
      browsing.describe(await transition(serviceId, { from: 'active', to: 'paused', action: 'paused' }, ownedBy(actor)), actor),

    resumeService: async (actor: Actor, serviceId: string) =>
      browsing.describe(await transition(serviceId, { from: 'paused', to: 'active', action: 'resumed' }, ownedBy(actor)), actor),

    /** Pending -> active; the `service.approved` event is written in the same transaction. */
    async approveService(actor: Actor, serviceId: string) {
      const row = await transition(serviceId, { from: 'pending', to: 'active', action: 'approved' }, anyone, async (tx, approved) => {
        await emitEvent(outbox, tx, catalogueEvents.serviceApproved, { serviceId: approved.id, sellerId: approved.sellerId }, approved.updatedAt)
        await recordDecision(tx, actor, approved, 'pending')
      })
      return browsing.describe(row, actor)
    },

    /** Pending -> rejected with a reason the seller sees; editing the service resubmits it. `service.rejected` is written in the same transaction. */
    async rejectService(actor: Actor, serviceId: string, reason: string) {
      const row = await transition(serviceId, { from: 'pending', to: 'rejected', action: 'rejected', rejectionReason: reason }, anyone, async (tx, rejected) => {
        await recordDecision(tx, actor, rejected, 'pending', reason)
        await emitEvent(outbox, tx, catalogueEvents.serviceRejected, { serviceId: rejected.id, sellerId: rejected.sellerId, reason }, rejected.updatedAt)
      })
      return browsing.describe(row, actor)
    },
  }
}
