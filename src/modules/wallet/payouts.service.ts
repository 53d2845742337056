import { can, type Actor } from '../../access/access.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { fieldError, forbidden, notFound, validationError, type FieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { fromCents, toCents } from '../../lib/money.ts'
import { offsetOf, toPage, type PageRequest } from '../../http/pagination.ts'
import { emitEvent } from '../../platform/outbox/events.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UsersService } from '../users/users.module.ts'
import type { LedgerService } from './ledger.service.ts'
import { createPayoutsRepository, preparePayoutRequest } from './payouts.repository.ts'
import type { PayoutMethod, PayoutRow, PayoutStatus } from './payouts.table.ts'
import { kycRequired, payoutNotPending } from './wallet.errors.ts'
import { walletEvents } from './wallet.events.ts'

export interface PayoutRequest {
  amount: number
  method: PayoutMethod
  details: { accountNumber?: string; bankName?: string; accountHolder?: string; email?: string }
}

/** The details each method needs, and the ones it accepts. */
const METHOD_FIELDS: Record<PayoutMethod, { required: string[]; optional: string[] }> = {
  bank_transfer: { required: ['accountNumber', 'bankName'], optional: ['accountHolder'] },
  paypal: { required: ['email'], optional: [] },
}

/** `****1234`: what anyone but the owner sees of an account number. */
const maskAccountNumber = (accountNumber: string) => `****${accountNumber.replace(/\s+/g, '').slice(-4)}`

function toPayout(row: PayoutRow, viewerIsOwner: boolean) {
  const details = { ...row.details }
  if (!viewerIsOwner && details.accountNumber) details.accountNumber = maskAccountNumber(details.accountNumber)
  return {
    id: row.id,
    userId: row.userId,
    amount: fromCents(row.amountCents),
    currency: row.currency,
    method: row.method,
    details,
    status: row.status,
    rejectionReason: row.rejectionReason,
    createdAt: row.createdAt.toISOString(),
    decidedAt: row.decidedAt?.toISOString() ?? null,
  }
}

/** The details the method uses, trimmed; a missing or foreign field is a field error. */
function checkDetails(request: PayoutRequest): Record<string, string> {
  const fields = METHOD_FIELDS[request.method]
  const problems: FieldError[] = []
  const details: Record<string, string> = {}
  for (const name of fields.required) if (request.details[name as keyof PayoutRequest['details']] === undefined) problems.push({ field: `details.${name}`, message: `is required for ${request.method}` })
  for (const [name, value] of Object.entries(request.details)) {
    if (value === undefined) continue
    if (![...fields.required, ...fields.optional].includes(name)) problems.push({ field: `details.${name}`, message: `is not used by ${request.method}` })
    else details[name] = value.trim()
  }
  if (problems.length > 0) throw validationError(problems)
  return details
}

/** What payouts are built from. */
interface PayoutsDeps {
  db: Db
  clock: Clock
  outbox: Outbox
  ledger: LedgerService
  users: Pick<UsersService, 'kycVerifiedSql' | 'publicSummariesOf'>
  audit: Pick<AuditService, 'record'>
  currency: string
  minPayoutCents: number
}

/** Moves a pending payout to its decision, with the ledger transfer that goes with it, once. */
function decide(
  deps: Pick<PayoutsDeps, 'db' | 'clock' | 'outbox' | 'ledger' | 'audit'>,
  payoutId: string,
  to: Exclude<PayoutStatus, 'pending'>,
  action: string,
  authorise: (row: PayoutRow) => void,
  extra: { actor: Actor; reason?: string },
) {
  const { db, clock, outbox, ledger, audit } = deps
  return db.transaction(async (tx) => {
    const payouts = createPayoutsRepository(tx)
    const row = await payouts.lockById(payoutId)
    if (!row) throw notFound('Payout')
    authorise(row)
    if (row.status !== 'pending') throw payoutNotPending(row.status, action)
    const now = clock.now()
    const movement =
      to === 'processed'
        ? ({ to: { platform: 'external' }, type: 'payout', description: 'Payout sent' } as const)
        : ({ to: { userId: row.userId, kind: 'available' }, type: 'payout_reversal', description: to === 'rejected' ? 'Payout rejected' : 'Payout cancelled' } as const)
    await ledger.transfer(tx, { from: { userId: row.userId, kind: 'payout_pending' }, amountCents: row.amountCents, payoutId: row.id, ...movement })
    const updated = await payouts.update(row.id, { status: to, rejectionReason: extra.reason ?? null, decidedBy: extra.actor.id, decidedAt: now })
    const data = { payoutId: row.id, userId: row.userId, amount: fromCents(row.amountCents) }
    if (to === 'processed') await emitEvent(outbox, tx, walletEvents.payoutProcessed, data, now)
    if (to === 'rejected') await emitEvent(outbox, tx, walletEvents.payoutRejected, data, now)
    // Staff decisions are on record; an owner cancelling their own request is not a staff action.
    if (to !== 'cancelled') {
      await audit.record(tx, {
        action: to === 'processed' ? 'payout.approve' : 'payout.reject',
        actor: extra.actor,
        targetType: 'payout',
        targetId: row.id,
        reason: extra.reason ?? null,
        before: { status: row.status, amount: fromCents(row.amountCents), userId: row.userId },
        after: { status: to },
      })
    }
    return updated
  })
}

const mayDecide = (actor: Actor) => () => {
  if (!can(actor, 'approve_withdrawals')) throw forbidden('Requires the approve_withdrawals permission')
}

/**
 * Payouts (decision 0022): the amount moves to `payout_pending` at request; staff process it (the
 * money leaves through `external`) or reject it, or the owner cancels it while pending (the money
 * returns to `available`). Every move happens under the payout's row lock: one decision wins.
 */
export function createPayoutsService(deps: PayoutsDeps) {
  const { db, ledger, users, currency, minPayoutCents } = deps
  const requestStatement = preparePayoutRequest(users.kycVerifiedSql)

  return {
    /** `POST /wallet/payout`. */
    async requestPayout(actor: Actor, request: PayoutRequest) {
      const amountCents = toCents(request.amount)
      if (amountCents === undefined) throw fieldError('amount', 'must have at most two decimals')
      if (amountCents < minPayoutCents) throw fieldError('amount', `must be at least ${fromCents(minPayoutCents).toFixed(2)} (the minimum payout)`)
      const details = checkDetails(request)
      const id = newId()
      const values = { userId: actor.id, currency, method: request.method, details: JSON.stringify(details) }
      // One statement: the KYC check, the transfer (its balance check under the lock) and the payout row.
      const transfer = { from: { userId: actor.id, kind: 'available' }, to: { userId: actor.id, kind: 'payout_pending' }, amountCents, type: 'payout', description: 'Payout requested', payoutId: id } as const
      const { createdAt } = await ledger.book(db, transfer, async (transferValues) => {
        const row = await createPayoutsRepository(db).request(requestStatement, { ...transferValues, ...values })
        if (!row?.kyc_verified) throw kycRequired()
        return row
      })
      const row: PayoutRow = { id, userId: actor.id, amountCents, currency, method: request.method, details, status: 'pending', rejectionReason: null, decidedBy: null, createdAt, decidedAt: null }
      return toPayout(row, true)
    },

    /** `GET /wallet/payouts`: the caller's payouts, newest first. */
    async listPayouts(actor: Actor, page: PageRequest) {
      const { rows, total } = await createPayoutsRepository(db).listByUser(actor.id, offsetOf(page), page.limit)
      return toPage(
        rows.map((row) => toPayout(row, true)),
        total,
        page,
      )
    },

    /** `POST /wallet/payouts/{id}/cancel`: the owner, while pending; another user's payout is 404. */
    async cancelPayout(actor: Actor, payoutId: string) {
      const row = await decide(
        deps,
        payoutId,
        'cancelled',
        'cancelled',
        (payout) => {
          if (payout.userId !== actor.id) throw notFound('Payout')
        },
        { actor },
      )
      return toPayout(row, true)
    },

    /** `GET /admin/payouts?status=` (view_accounts): oldest first; account numbers masked. */
    async listForStaff(actor: Actor, status: PayoutStatus | undefined, page: PageRequest) {
      const { rows, total } = await createPayoutsRepository(db).listByStatus(status, offsetOf(page), page.limit)
      const requesters = await users.publicSummariesOf(db, [...new Set(rows.map((row) => row.userId))])
      return toPage(
        rows.map((row) => ({ ...toPayout(row, row.userId === actor.id), user: requesters.get(row.userId)! })),
        total,
        page,
      )
    },

    approvePayout: async (actor: Actor, payoutId: string) => {
      const row = await decide(deps, payoutId, 'processed', 'approved', mayDecide(actor), { actor })
      return toPayout(row, row.userId === actor.id)
    },

    rejectPayout: async (actor: Actor, payoutId: string, reason: string) => {
      const row = await decide(deps, payoutId, 'rejected', 'rejected', mayDecide(actor), { actor, reason })
      return toPayout(row, row.userId === actor.id)
    },
  }
}

export type PayoutsService = ReturnType<typeof createPayoutsService>