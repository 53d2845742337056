import type { Mailer } from '../../platform/mail/mailer.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import type { MessagingService } from '../messaging/messaging.module.ts'
import type { OrdersApi } from '../orders/orders.module.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { createOfferAccepting } from './offer-accepting.service.ts'
import { createOfferDeclining } from './offer-declining.service.ts'
import { createOfferExpiry } from './offer-expiry.service.ts'
import { createOfferMailing } from './offer-mailing.service.ts'
import { createOfferMaking } from './offer-making.service.ts'
import { createOfferReading } from './offer-reading.service.ts'
import type { OfferDeps } from './offer-rules.ts'
import { createOfferWithdrawing } from './offer-withdrawing.service.ts'

/**
 * Custom offers (docs/offers.md): made in a direct conversation, answered by the buyer (an
 * accepted offer places its order), withdrawn by the seller, expired by time. Each use case lives
 * in its own file; this composes them.
 */
export function createOffersService(
  deps: OfferDeps & {
    mailer: Mailer
    appUrl: string
    currency: string
    users: Pick<UsersService, 'findAccountById'>
    notifications: Pick<NotificationsService, 'emailWanted'>
    catalogue: Pick<CatalogueService, 'offerSql'>
    messaging: Pick<MessagingService, 'conversationParties' | 'isOnline' | 'writeOfferMessage' | 'publishMessage' | 'registerOfferReader'>
    orders: Pick<OrdersApi, 'offerPlacement' | 'getOrder'>
  },
) {
  const reading = createOfferReading(deps)
  // Messages that present an offer show it as it stands now.
  deps.messaging.registerOfferReader(reading.offersByIds)
  return {
    ...createOfferMaking(deps),
    ...createOfferAccepting(deps),
    ...createOfferDeclining(deps),
    ...createOfferWithdrawing(deps),
    ...reading,
    ...createOfferExpiry(deps),
    ...createOfferMailing(deps),
  }
}

export type OffersService = ReturnType<typeof createOffersService>
