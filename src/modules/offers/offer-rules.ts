import { Type } from '@sinclair/typebox'
import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { fromCents } from '../../lib/money.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import { defineJob } from '../../platform/outbox/jobs.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { RealtimeHub } from '../../platform/realtime/realtime.ts'
import type { Offer } from '../messaging/messaging.module.ts'
import type { OfferNews } from './offer-emails.ts'
import { invalidOfferMove, offerExpired, onlyParty } from './offers.errors.ts'
import { offersEvents } from './offers.events.ts'
import { createOffersRepository } from './offers.repository.ts'
import type { OfferRow } from './offers.table.ts'

/** The e-mail about an offer's news, sent by the worker after the change committed. */
export const OFFER_MAIL_JOB = defineJob(
  'mail.offer',
  Type.Object({ offerId: Type.String(), news: Type.Union(['created', 'accepted', 'declined', 'withdrawn', 'expired'].map((news) => Type.Literal(news))) }),
)

/** What every use case of offers is built from. */
export interface OfferDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  realtime: Pick<RealtimeHub, 'publish'>
}

/** After a change committed: the offer as it stands now, to every open socket of both parties (an `offer` frame). */
export const announce = (deps: Pick<OfferDeps, 'realtime' | 'clock'>, row: OfferRow): Promise<void> =>
  deps.realtime.publish([row.senderId, row.recipientId], { type: 'offer', data: offerAnswer(row, deps.clock.now()) })

/** A pending offer whose time has passed: it reads expired before the worker marks it. */
const isOverdue = (row: OfferRow, now: Date): boolean => row.status === 'pending' && row.expiresAt.getTime() <= now.getTime()

/** An offer as both parties see it. */
export function offerAnswer(row: OfferRow, now: Date): Offer {
  return {
    id: row.id,
    conversationId: row.conversationId,
    senderId: row.senderId,
    recipientId: row.recipientId,
    serviceId: row.serviceId,
    title: row.title,
    description: row.description,
    price: fromCents(row.priceCents),
    deliveryDays: row.deliveryDays,
    revisions: row.revisions,
    status: isOverdue(row, now) ? 'expired' : row.status,
    declineReason: row.declineReason,
    expiresAt: row.expiresAt.toISOString(),
    orderId: row.orderId,
    respondedAt: (isOverdue(row, now) ? row.expiresAt : row.respondedAt)?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}

const parties = (row: OfferRow) => ({ offerId: row.id, conversationId: row.conversationId, senderId: row.senderId, recipientId: row.recipientId })

/** The outbox writes of an offer's news: its event and the e-mail job, in the change's transaction. */
export async function recordNews(outbox: Outbox, tx: Tx, row: OfferRow, news: Exclude<OfferNews, 'created'>, at: Date): Promise<void> {
  if (news === 'accepted') await emitEvent(outbox, tx, offersEvents.offerAccepted, { ...parties(row), orderId: row.orderId!, price: fromCents(row.priceCents) }, at)
  if (news === 'declined') await emitEvent(outbox, tx, offersEvents.offerDeclined, { ...parties(row), reason: row.declineReason }, at)
  if (news === 'withdrawn') await emitEvent(outbox, tx, offersEvents.offerWithdrawn, parties(row), at)
  if (news === 'expired') await emitEvent(outbox, tx, offersEvents.offerExpired, parties(row), at)
  await outbox.add(tx, OFFER_MAIL_JOB, { offerId: row.id, news })
}

/** Marks a pending offer whose time passed as expired, with its news; the row is locked by the caller. */
export async function expireOffer(deps: OfferDeps, tx: Tx, row: OfferRow): Promise<OfferRow> {
  const updated = await createOffersRepository(tx).update(row.id, { status: 'expired', respondedAt: row.expiresAt, updatedAt: deps.clock.now() })
  await recordNews(deps.outbox, tx, updated, 'expired', row.expiresAt)
  return updated
}

/**
 * Runs one party's move on a pending offer under its row lock: 404 for anyone but its two
 * parties, 422 INVALID_TRANSITION for the other party or an offer no longer pending, and 422
 * OFFER_EXPIRED once its time has passed; an overdue offer is marked expired first (that change
 * commits, the move does not happen).
 */
export async function moveOffer<T>(deps: OfferDeps, actor: Actor, offerId: string, move: { party: 'recipient' | 'sender'; verb: string; past: string }, change: (tx: Tx, row: OfferRow, now: Date) => Promise<T>): Promise<T> {
  const outcome = await deps.db.transaction(async (tx): Promise<{ expired: OfferRow } | { expired: null; value: T }> => {
    const row = await createOffersRepository(tx).lockById(offerId)
    if (!row || (row.senderId !== actor.id && row.recipientId !== actor.id)) throw notFound('Offer')
    const now = deps.clock.now()
    if ((move.party === 'recipient' ? row.recipientId : row.senderId) !== actor.id) throw onlyParty(move.party, move.verb)
    if (row.status === 'expired') throw offerExpired()
    if (isOverdue(row, now)) return { expired: await expireOffer(deps, tx, row) }
    if (row.status !== 'pending') throw invalidOfferMove(row.status, move.past, ': only a pending one')
    return { expired: null, value: await change(tx, row, now) }
  })
  if (outcome.expired) {
    await announce(deps, outcome.expired)
    throw offerExpired()
  }
  return outcome.value
}
