import type { Mailer } from '../../platform/mail/mailer.ts'
import type { NotificationsService } from '../notifications/notifications.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { addresseeOf, offerEmail, type OfferNews } from './offer-emails.ts'
import type { OfferDeps } from './offer-rules.ts'
import { createOffersRepository } from './offers.repository.ts'

/** The worker's half of an offer's news: the e-mail to the party it concerns. */
export function createOfferMailing(deps: OfferDeps & { mailer: Mailer; users: Pick<UsersService, 'findAccountById'>; notifications: Pick<NotificationsService, 'emailWanted'>; appUrl: string; currency: string }) {
  const { db, mailer, users, notifications, appUrl, currency } = deps
  return {
    async sendOfferEmail(job: { offerId: string; news: string }): Promise<void> {
      const offer = await createOffersRepository(db).findById(job.offerId)
      if (!offer) return
      const news = job.news as OfferNews
      const to = addresseeOf(offer, news)
      const [addressee, other] = await Promise.all([users.findAccountById(db, to), users.findAccountById(db, to === offer.senderId ? offer.recipientId : offer.senderId)])
      // An account that can no longer be reached is not written to.
      if (!addressee || !addressee.isActive || addressee.suspendedAt !== null || !other) return
      if (!(await notifications.emailWanted(db, addressee.id, news === 'created' ? 'offer.received' : `offer.${news}`))) return
      await mailer.send(offerEmail(addressee, other.fullName, offer, news, `${appUrl}/messages/${offer.conversationId}`, currency))
    },
  }
}
