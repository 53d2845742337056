import { DAY } from '../../lib/clock.ts'
import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { AuthService } from '../auth/auth.module.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { WalletApi } from '../wallet/wallet.module.ts'
import { createOfferPlacement } from './offer-placement.service.ts'
import { createOrderAnswers } from './order-answers.service.ts'
import { ORDER_REQUEST_MAIL_JOB } from './order-request-rules.ts'
import { requestErrors } from './order-requests.errors.ts'
import { orderRequestsRoutes } from './order-requests.routes.ts'
import { orderRequests } from './order-requests.table.ts'
import { tipErrors } from './order-tips.errors.ts'
import { orderTipsRoutes } from './order-tips.routes.ts'
import { createOrderTips } from './order-tips.service.ts'
import { ORDERS_JOBS } from './order-resolution-emails.ts'
import { orderStaffRefundsRoutes } from './order-staff-refunds.routes.ts'
import { createOrderStaffRefunds, STAFF_REFUND_JOBS } from './order-staff-refunds.service.ts'
import { ordersAdminRoutes } from './orders.admin.routes.ts'
import { ordersErrors } from './orders.errors.ts'
import { ordersEvents } from './orders.events.ts'
import { ordersRoutes } from './orders.routes.ts'
import { createOrdersService } from './orders.service.ts'
import { orderDeliveries, orders, sellerOrderFigures } from './orders.table.ts'

/** Orders: placing into escrow, the status machine, deliveries, auto-completion, requests between the parties, staff cancels and dispute resolutions (all-or-nothing or split). */
export const ordersModule = defineModule({
  name: 'orders',
  needs: ['auth', 'catalogue', 'wallet', 'uploads', 'users', 'audit', 'messaging', 'notifications'],
  tables: { orders, orderDeliveries, orderRequests, sellerOrderFigures },
  create: ({ config, db, clock, outbox, mailer }, deps: { auth: AuthService; catalogue: CatalogueService; wallet: WalletApi; uploads: UploadsService; users: UsersService; audit: AuditService; messaging: MessagingService; notifications: NotificationsService }) => {
    const common = { db, clock, outbox, ledger: deps.wallet.ledger, catalogue: deps.catalogue, users: deps.users, uploads: deps.uploads, messaging: deps.messaging, platformFeeBasisPoints: config.orders.platformFeeBasisPoints, tipWindowMs: config.tips.windowMs }
    return {
      ...createOrdersService({ ...common, mailer, appUrl: config.appUrl, sessions: deps.auth.sessionCheck, audit: deps.audit, notifications: deps.notifications, autoCompleteAfterMs: config.orders.autoCompleteAfterMs, requestExpiresAfterMs: config.orders.requestExpiresAfterMs }),
      /** `POST /orders/{orderId}/tip`. */
      tips: createOrderTips({ ...common, answers: createOrderAnswers(common), feeBasisPoints: config.tips.feeBasisPoints }),
      /** `POST /admin/orders/{orderId}/refund`. */
      staffRefunds: createOrderStaffRefunds({ ...common, mailer, appUrl: config.appUrl, audit: deps.audit, answers: createOrderAnswers(common) }),
      /** For the offers module: the order of an accepted custom offer, in its transaction. */
      offerPlacement: createOfferPlacement(common),
    }
  },
  routes: (api, { config }) => async (app) => {
    await app.register(ordersRoutes, { orders: api, tmpDir: config.tmpDir })
    await app.register(orderTipsRoutes, { tips: api.tips, tipDays: config.tips.windowMs / DAY })
    await app.register(orderRequestsRoutes, { orders: api, requestDays: config.orders.requestExpiresAfterMs / DAY })
    await app.register(ordersAdminRoutes, { orders: api })
    await app.register(orderStaffRefundsRoutes, { refunds: api.staffRefunds })
  },
  jobs: (api) => [
    handleJob(ORDERS_JOBS.resolvedEmail, (payload) => api.sendResolvedEmail(payload)),
    handleJob(ORDER_REQUEST_MAIL_JOB, (payload) => api.sendRequestEmail(payload)),
    handleJob(STAFF_REFUND_JOBS.refundedEmail, (payload) => api.staffRefunds.sendStaffRefundEmail(payload)),
  ],
  periodic: (api, { config }) => [
    { name: 'auto-complete-orders', everyMs: config.workerTickMs, run: () => api.completeDueOrders() },
    { name: 'settle-order-requests', everyMs: config.workerTickMs, run: () => api.settleDueRequests() },
  ],
  statistics: (api) => api.statistics,
  events: Object.values(ordersEvents),
  errors: { ...ordersErrors, ...tipErrors, ...requestErrors },
})

export type OrdersApi = ReturnType<(typeof ordersModule)['create']>
export type { OrdersService } from './orders.service.ts'
export type { OfferTerms } from './offer-placement.service.ts'
export type { OrderRow } from './orders.table.ts'
export type { OrderFigures, SellerPerformance } from './orders.repository.ts'
export type { OrderStatus } from './order-status.ts'
export { Order } from './orders.schemas.ts'
