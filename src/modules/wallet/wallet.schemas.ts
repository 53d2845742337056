import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable, Timestamp } from '../../http/common.schemas.ts'
import { ledgerTransactionTypes } from './ledger.table.ts'
import { depositStatuses } from './deposits.table.ts'

const Money = (description: string) => Type.Number({ description: `${description} Two decimals, in the platform currency.` })

export const Wallet = Type.Object({
  balance: Money('Available to spend or withdraw.'),
  escrow: Money('Paid into orders that are not finished yet.'),
  pendingPayouts: Money('Requested payouts awaiting staff approval.'),
  currency: Type.String({ description: 'ISO 4217 code, e.g. `USD`.' }),
})

export const WalletTransaction = Type.Object({
  id: Id,
  type: Type.Union(
    ledgerTransactionTypes.map((type) => Type.Literal(type)),
    { description: 'What moved the money.' },
  ),
  amount: Money('Signed: positive when money came in.'),
  balanceAfter: Money('The available balance right after this movement.'),
  description: Type.String(),
  orderId: Nullable(Id),
  payoutId: Nullable(Id),
  createdAt: Timestamp,
})

export const DepositBody = Type.Object(
  {
    amount: Type.Number({
      minimum: 0.5,
      maximum: 10_000,
      errorMessage: 'must be a number from 0.50 to 10000.00 with at most two decimals',
      description: 'From 0.50 to 10,000.00, at most two decimals.',
    }),
  },
  { additionalProperties: false },
)
export type DepositBody = Static<typeof DepositBody>

export const Deposit = Type.Object({
  id: Id,
  amount: Type.Number(),
  currency: Type.String(),
  status: Type.Union(depositStatuses.map((status) => Type.Literal(status)), { description: '`succeeded` once credited; `pending` while the provider confirms.' }),
  failureReason: Nullable(Type.String()),
  createdAt: Timestamp,
  completedAt: Nullable(Timestamp),
})

export const LedgerCheck = Type.Object({
  ok: Type.Boolean({ description: 'True only when every transaction sums to zero and every balance equals the sum of its entries.' }),
  transactions: Type.Integer(),
  accounts: Type.Integer(),
  problems: Type.Array(Type.Object({ kind: Type.String(), id: Id, message: Type.String() })),
})
