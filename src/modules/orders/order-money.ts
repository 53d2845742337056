import { proportionOfCents } from '../../lib/money.ts'
import type { OrderRow } from './orders.table.ts'

/** What an order still holds in the buyer's escrow while it is open: its total less what went back to the buyer before it ended (partial refunds). */
export const escrowLeftCents = (row: Pick<OrderRow, 'totalCents' | 'refundedCents'>): number => row.totalCents - row.refundedCents

/**
 * The platform's fee on part of an order's escrow: the order's own rate (the fee fixed at
 * placement over its total, so a rate changed since does not apply), rounded half-up to the cent.
 * The one rule for the fee on what is left, whether a completion after partial refunds or a split
 * resolution takes it: on the whole total it is exactly the fee fixed at placement.
 */
export const feeOnCents = (row: Pick<OrderRow, 'totalCents' | 'platformFeeCents' | 'placementFeeCents'>, amountCents: number): number =>
  proportionOfCents(amountCents, row.placementFeeCents ?? row.platformFeeCents, row.totalCents)
