import type { Actor } from '../../access/access.ts'
import type { Db, Executor } from '../../db/client.ts'
import { declareLazyStatements } from '../../db/statements.ts'
import { notFound } from '../../lib/errors.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import { isOwner, isVisibleTo, mayModerate } from './service-rules.ts'
import { createServicesRepository, prepareServiceRead, type ServiceJson, type ServiceViews } from './services.repository.ts'
import type { ServiceRow, ServiceStatus } from './services.table.ts'

/**
 * Reading one service's full answer. It has one builder, the statement that writes it as JSON
 * (`prepareServiceRead`): `GET /services/{id}` sends its text, and the answers to writes and the
 * moderation queue parse it, so a field is added or removed in one place.
 */
export function createServiceReading(deps: { db: Db; views: ServiceViews }) {
  const { db, views } = deps
  let statement: ReturnType<typeof prepareServiceRead> | undefined
  const serviceRead = () => (statement ??= prepareServiceRead(db, views))
  const readService = (serviceId: string, viewer: Actor | null) => serviceRead()(serviceId, viewer?.id ?? null)
  declareLazyStatements('catalogue.read', () => void serviceRead())

  /** The full answer of a service `viewer` may see (the rejection reason is not public). */
  async function describe(row: Pick<ServiceRow, 'id'>, viewer: Actor | null): Promise<ServiceJson> {
    const read = await readService(row.id, viewer)
    if (!read) throw notFound('Service')
    const service = read.service.parse()
    // The statement wrote `rejectionReason: null`; only its owner and moderators see a real one.
    return isOwner(read, viewer) || mayModerate(viewer) ? { ...service, rejectionReason: read.rejectionReason } : service
  }

  return {
    /** The answer to a write, read after its transaction commits. */
    describe,

    /** One prepared statement: the service, its offer, seller, banner and gallery, and whether the viewer saved it. */
    async getService(viewer: Actor | null, serviceId: string) {
      const row = await readService(serviceId, viewer)
      if (!row || !isVisibleTo(row, viewer)) throw notFound('Service')
      if (row.rejectionReason === null || !(isOwner(row, viewer) || mayModerate(viewer))) return row.service
      return { ...row.service.parse(), rejectionReason: row.rejectionReason }
    },

    /**
     * `GET /admin/services`: oldest first, so the review queue is worked in order. Each service
     * is read by the one statement that builds its answer (a page is at most `limit` reads by key).
     */
    async listForModeration(viewer: Actor, status: ServiceStatus, page: PageRequest) {
      const { rows, total } = await createServicesRepository(db).listByStatus(status, offsetOf(page), page.limit)
      return toPage(await Promise.all(rows.map((row) => describe(row, viewer))), total, page)
    },

    /** Services that are not soft-deleted, per seller (staff user lists): one grouped query. */
    countServicesBySellers: (executor: Executor, sellerIds: string[]) => createServicesRepository(executor).countBySellers(sellerIds),
  }
}
