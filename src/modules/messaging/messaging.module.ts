import { defineModule } from '../../platform/module.ts'
import { handleJob } from '../../platform/outbox/jobs.ts'
import type { AuthService } from '../auth/auth.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UploadsService } from '../uploads/uploads.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { messagingAdminRoutes } from './messaging.admin.routes.ts'
import { messagingErrors } from './messaging.errors.ts'
import { messagingRoutes } from './messaging.routes.ts'
import { createMessagingService, MESSAGING_JOBS } from './messaging.service.ts'
import { conversationParticipants, conversations, messages } from './messaging.table.ts'

/** Conversations (direct and per order), messages and attachments, unread counts, realtime frames, e-mail to the away. */
export const messagingModule = defineModule({
  name: 'messaging',
  needs: ['users', 'uploads', 'auth', 'notifications'],
  tables: { conversations, conversationParticipants, messages },
  create: ({ config, db, clock, outbox, mailer, realtime }, deps: { users: UsersService; uploads: UploadsService; auth: AuthService; notifications: NotificationsService }) => {
    const service = createMessagingService({
      db,
      clock,
      outbox,
      mailer,
      realtime,
      appUrl: config.appUrl,
      users: deps.users,
      uploads: deps.uploads,
      sessions: deps.auth.sessionCheck,
      notifications: deps.notifications,
    })
    // Chat attachments are served to the conversation's participants (and the holder of a signed link).
    deps.uploads.registerAccessPolicy('chat', (conversationId, actor) => service.isParticipant(db, conversationId, actor.id))
    return service
  },
  routes: (api, { config, realtime }) => async (app) => {
    await app.register(messagingRoutes, { messaging: api, realtime, maxSocketsPerUser: config.realtime.maxSocketsPerUser, tmpDir: config.tmpDir })
    await app.register(messagingAdminRoutes, { messaging: api })
  },
  jobs: (api) => [handleJob(MESSAGING_JOBS.newMessageEmail, (payload) => api.sendNewMessageEmail(payload))],
  errors: messagingErrors,
})

/**
 * For the orders module: `orderConversationCtes(placed)` and `orderConversationValues()` open the
 * order's conversation in the statement that places the order; `conversationsOfOrders` finds it
 * for order answers; `writeOrderNote` and `publishMessage` post a party's note on a move to it.
 * For the offers module: `conversationParties`, `writeOfferMessage`, `registerOfferReader` and
 * the `Offer` schema (a message that presents an offer carries it, decision 0161).
 */
export type { MessagingService } from './messaging.service.ts'
export type { MessageRow } from './messaging.table.ts'
export { Offer, offerStatuses, type OfferStatus } from './message-offers.ts'
export { messagingErrors, recipientUnavailable } from './messaging.errors.ts'
export type { OrderConversationValues, PlacedOrder } from './messaging.repository.ts'
