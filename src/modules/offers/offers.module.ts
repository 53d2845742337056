import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { OrdersApi } from '../orders/orders.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { OFFER_MAIL_JOB } from './offer-rules.ts'
import { offersErrors } from './offers.errors.ts'
import { offersEvents } from './offers.events.ts'
import { offersRoutes } from './offers.routes.ts'
import { createOffersService } from './offers.service.ts'
import { offers } from './offers.table.ts'

/** Custom offers: a seller's terms for one buyer in their conversation; accepting one places its order. */
export const offersModule = defineModule({
  name: 'offers',
  needs: ['users', 'catalogue', 'messaging', 'orders', 'notifications'],
  tables: { offers },
  create: ({ config, db, clock, outbox, mailer, realtime }, deps: { users: UsersService; catalogue: CatalogueService; messaging: MessagingService; orders: OrdersApi; notifications: NotificationsService }) =>
    createOffersService({ db, clock, outbox, mailer, realtime, appUrl: config.appUrl, currency: config.currency, ...deps }),
  routes: (api) => async (app) => {
    await app.register(offersRoutes, { offers: api })
  },
  jobs: (api) => [handleJob(OFFER_MAIL_JOB, (payload) => api.sendOfferEmail(payload))],
  periodic: (api, { config }) => [{ name: 'expire-offers', everyMs: config.workerTickMs, run: () => api.expireDueOffers() }],
  events: Object.values(offersEvents),
  errors: offersErrors,
})

export type { OffersService } from './offers.service.ts'
