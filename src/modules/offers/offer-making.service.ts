import { sql } from 'drizzle-orm'
import { rowsOf } from '../../db/client.ts'
import type { Actor } from '../../access/access.ts'
import { DAY } from '../../lib/clock.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { CatalogueService } from '../catalogue/catalogue.module.ts'
import { recipientUnavailable, type MessageRow, type MessagingService } from '../messaging/messaging.module.ts'
import { OFFER_MAIL_JOB, offerAnswer, type OfferDeps } from './offer-rules.ts'
import { notDirectConversation, offerServiceUnavailable } from './offers.errors.ts'
import { offersEvents } from './offers.events.ts'
import { createOffersRepository } from './offers.repository.ts'
import { EXPIRES_IN_DAYS_DEFAULT, type CreateOfferBody } from './offers.schemas.ts'

/**
 * Making an offer: `POST /messages/conversations/{conversationId}/offers`. The offer and the
 * message that presents it are written in one transaction, then the message reaches both sides'
 * sockets like any message.
 */
export function createOfferMaking(
  deps: OfferDeps & {
    messaging: Pick<MessagingService, 'conversationParties' | 'isOnline' | 'writeOfferMessage' | 'publishMessage'>
    catalogue: Pick<CatalogueService, 'offerSql'>
  },
) {
  const { db, clock, outbox, messaging, catalogue } = deps

  /** The service must be the sender's (404 otherwise, as for any service that is not theirs to name) and active (422). */
  async function checkService(actor: Actor, serviceId: string): Promise<void> {
    const [row] = await rowsOf<{ service: { status: string; sellerId: string } | null }>(db, sql`select ${catalogue.offerSql(sql`${serviceId}::uuid`)} as service`)
    const service = row?.service
    if (!service || service.sellerId !== actor.id) throw notFound('Service')
    if (service.status !== 'active') throw offerServiceUnavailable()
  }

  return {
    async createOffer(actor: Actor, conversationId: string, input: CreateOfferBody) {
      const party = await messaging.conversationParties(db, actor, conversationId)
      if (!party.direct) throw notDirectConversation()
      if (!party.otherAvailable) throw recipientUnavailable()
      if (input.serviceId !== undefined) await checkService(actor, input.serviceId)
      const priceCents = toCents(input.price)
      if (priceCents === undefined) throw fieldError('price', 'must have at most two decimals')
      const online = await messaging.isOnline(party.otherId)
      let message: MessageRow | undefined
      const row = await db.transaction(async (tx) => {
        const now = clock.now()
        const offer = await createOffersRepository(tx).insert({
          id: newId(),
          conversationId,
          senderId: actor.id,
          recipientId: party.otherId,
          serviceId: input.serviceId ?? null,
          title: input.title.trim(),
          description: input.description.trim(),
          priceCents,
          deliveryDays: input.deliveryDays,
          revisions: input.revisions,
          status: 'pending',
          expiresAt: new Date(now.getTime() + (input.expiresInDays ?? EXPIRES_IN_DAYS_DEFAULT) * DAY),
          createdAt: now,
          updatedAt: now,
        })
        message = await messaging.writeOfferMessage(tx, {
          conversationId,
          senderId: actor.id,
          recipientId: party.otherId,
          content: `Custom offer: ${offer.title} (${fromCents(priceCents).toFixed(2)}, ${offer.deliveryDays} day${offer.deliveryDays === 1 ? '' : 's'})`,
          offerId: offer.id,
          recipientOnline: online,
        })
        await emitEvent(
          outbox,
          tx,
          offersEvents.offerCreated,
          {
            offerId: offer.id,
            conversationId,
            senderId: actor.id,
            recipientId: party.otherId,
            serviceId: offer.serviceId,
            price: fromCents(priceCents),
            deliveryDays: offer.deliveryDays,
            expiresAt: offer.expiresAt.toISOString(),
          },
          now,
        )
        await outbox.add(tx, OFFER_MAIL_JOB, { offerId: offer.id, news: 'created' })
        return offer
      })
      await messaging.publishMessage(message!, party.otherId)
      return offerAnswer(row, clock.now())
    },
  }
}
