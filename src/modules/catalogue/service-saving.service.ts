import type { Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import { declareLazyStatements } from '../../db/statements.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { createSavedServicesRepository } from './saved-services.repository.ts'
import { isVisibleTo } from './service-rules.ts'
import { createServicesRepository, type ServiceViews } from './services.repository.ts'

/**
 * A person's saved services (decision 0205): saving and removing one, each idempotent, with the
 * service's `savedCount` moved in the same transaction; and their list, which shows only the
 * services that are active now. Nothing of one person's list reaches another: `saved` in a
 * service's answer is the caller's own, and `savedCount` is a number.
 */
export function createServiceSaving(deps: { db: Db; clock: Clock; views: ServiceViews }) {
  const { db, clock, views } = deps
  const saved = createSavedServicesRepository(views)
  declareLazyStatements('catalogue.saved', () => void saved.savedPage())

  return {
    /** `PUT /services/{id}/saved`: a service the caller may not see is 404. */
    async saveService(actor: Actor, serviceId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const row = await createServicesRepository(tx).findById(serviceId)
        if (!row || !isVisibleTo(row, actor)) throw notFound('Service')
        await saved.add(tx, { userId: actor.id, serviceId }, clock.now())
      })
    },

    /**
     * `DELETE /services/{id}/saved`: taking a service off one's own list always works, even once
     * the service is paused or deleted; otherwise a service the caller may not see is 404.
     */
    async unsaveService(actor: Actor, serviceId: string): Promise<void> {
      await db.transaction(async (tx) => {
        if (await saved.remove(tx, { userId: actor.id, serviceId })) return
        const row = await createServicesRepository(tx).findById(serviceId)
        if (!row || !isVisibleTo(row, actor)) throw notFound('Service')
      })
    },

    /** `GET /users/me/saved`: newest saved first, as list items; services not active now are left out. */
    async listSavedServices(actor: Actor, page: PageRequest) {
      const { total, items } = await saved.page(db, { userId: actor.id, offset: offsetOf(page), limit: page.limit })
      return toPage(items, total, page)
    },
  }
}
