import { Type, type Static } from '@sinclair/typebox'
import { Amount, Id, IdParams, Nullable, PageQuery, Timestamp } from '../../http/common.schemas.ts'
import { Email, UserSummary } from '../users/users.module.ts'
import { ledgerTransactionTypes, statementAccountKinds } from './ledger.table.ts'
import { depositStatuses } from './deposits.table.ts'
import { payoutMethods, payoutStatuses } from './payouts.table.ts'

const Money = (description: string) => Type.Number({ description: `${description} Two decimals, in the platform currency.` })

export const Wallet = Type.Object({
  balance: Money('Available to spend or withdraw.'),
  escrow: Money('Paid into orders that are not finished yet.'),
  pendingPayouts: Money('Requested payouts awaiting staff approval.'),
  clearing: Money('Earnings (orders, tips) waiting CLEARANCE_DAYS before they become available: neither spendable nor withdrawable yet.'),
  nextClearingAt: Nullable(Type.String({ format: 'date-time', description: 'When the next clearing earning becomes available (the worker moves it within WORKER_TICK_SECONDS after); null when nothing is clearing.' })),
  currency: Type.String({ description: 'ISO 4217 code, e.g. `USD`.' }),
})

const StatementAccountSchema = Type.Union(
  statementAccountKinds.map((kind) => Type.Literal(kind)),
  { errorMessage: `must be one of ${statementAccountKinds.join(', ')}` },
)

export const WalletTransaction = Type.Object({
  id: Id,
  type: Type.Union(
    ledgerTransactionTypes.map((type) => Type.Literal(type)),
    { description: 'What moved the money.' },
  ),
  account: Type.Union(
    statementAccountKinds.map((kind) => Type.Literal(kind)),
    { description: 'The balance this line moved: `available`, or `clearing` (an earning waiting to become available, or its clearance or reversal).' },
  ),
  amount: Money('Signed: positive when money came in.'),
  balanceAfter: Money('The balance of `account` right after this movement.'),
  description: Type.String(),
  orderId: Nullable(Id),
  payoutId: Nullable(Id),
  availableAt: Nullable(Type.String({ format: 'date-time', description: 'On an earning credited to `clearing`: when it becomes available (its `clearance` lines follow then); null on every other line.' })),
  createdAt: Timestamp,
})

export const StatementQuery = Type.Composite([PageQuery, Type.Object({ account: Type.Optional(StatementAccountSchema) })], { additionalProperties: false })

export const DepositBody = Type.Object(
  {
    amount: Amount({
      minimum: 0.5,
      maximum: 10_000,
      errorMessage: 'must be a number from 0.50 to 10000.00 with at most two decimals',
      description: 'From 0.50 to 10,000.00, at most two decimals.',
    }),
  },
  { additionalProperties: false, examples: [{ amount: 150 }] },
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
  ok: Type.Boolean({ description: 'True only when every transaction sums to zero, every balance equals the sum of its entries and every clearing balance equals what its earnings still clearing hold.' }),
  transactions: Type.Integer(),
  accounts: Type.Integer(),
  problems: Type.Array(
    Type.Object({ kind: Type.String({ description: '`unbalanced_transaction`, `balance_mismatch` or `clearing_mismatch`.' }), id: Type.String({ ...Id, description: 'The transaction or the account.' }), message: Type.String() }),
  ),
})

const PayoutMethodSchema = Type.Union(
  payoutMethods.map((method) => Type.Literal(method)),
  { errorMessage: `must be one of ${payoutMethods.join(', ')}` },
)

const PayoutDetails = {
  bank_transfer: Type.Object(
    {
      accountNumber: Type.String({ minLength: 4, maxLength: 34, pattern: '^[A-Za-z0-9 ]+$', errorMessage: 'must be 4 to 34 letters, digits or spaces', description: 'The account number or IBAN.' }),
      bankName: Type.String({ minLength: 2, maxLength: 100, pattern: '\\S', errorMessage: 'must be 2 to 100 characters', description: 'The bank.' }),
      accountHolder: Type.Optional(Type.String({ minLength: 2, maxLength: 100, pattern: '\\S', errorMessage: 'must be 2 to 100 characters', description: 'Optional: the name on the account.' })),
    },
    { additionalProperties: false, description: 'Where a bank transfer goes.' },
  ),
  paypal: Type.Object({ email: Type.String({ ...Email, description: 'The PayPal account e-mail.' }) }, { additionalProperties: false, description: 'Where a PayPal payout goes.' }),
} satisfies Record<(typeof payoutMethods)[number], unknown>

/**
 * A payout request. The `details` depend on the `method`: one branch per method, chosen by it
 * (a discriminated `oneOf`), so the document states which details each method takes. The
 * minimum is the deployment's `MIN_PAYOUT`.
 */
export function payoutBody(minPayout: number) {
  const amount = Amount({
    minimum: minPayout,
    maximum: 1_000_000,
    errorMessage: { minimum: `must be at least ${minPayout.toFixed(2)} (the minimum payout)`, _: `must be a number from ${minPayout.toFixed(2)} to 1000000.00 with at most two decimals` },
    description: `At least the minimum payout (MIN_PAYOUT, here ${minPayout.toFixed(2)}), at most the available balance.`,
  })
  const branches = payoutMethods.map((method) => Type.Object({ amount, method: Type.Literal(method), details: PayoutDetails[method] }, { additionalProperties: false }))
  return Type.Unsafe<Static<(typeof branches)[number]>>({
    type: 'object',
    required: ['method'],
    oneOf: branches,
    discriminator: { propertyName: 'method' },
    description: '`bank_transfer` takes `accountNumber`, `bankName` and optionally `accountHolder`; `paypal` takes `email`.',
    examples: [
      { amount: 120.5, method: 'bank_transfer', details: { accountNumber: 'ES9121000418450200051332', bankName: 'CaixaBank', accountHolder: 'María González' } },
      { amount: 75, method: 'paypal', details: { email: 'maria.gonzalez@example.com' } },
    ],
  })
}
export type PayoutBody = Static<ReturnType<typeof payoutBody>>

export const Payout = Type.Object({
  id: Id,
  userId: Id,
  amount: Type.Number(),
  currency: Type.String(),
  method: PayoutMethodSchema,
  details: Type.Record(Type.String(), Type.String(), { description: 'As sent; the account number is masked (`****1234`) for anyone but the owner.' }),
  status: Type.Union(payoutStatuses.map((status) => Type.Literal(status))),
  rejectionReason: Nullable(Type.String()),
  createdAt: Timestamp,
  decidedAt: Nullable(Timestamp),
})

/** A payout in the staff queue names who asked for it, so the queue reads without a lookup per row. */
export const StaffPayout = Type.Composite([Payout, Type.Object({ user: UserSummary })])

export const PayoutParams = IdParams('payoutId')

export const StaffPayoutsQuery = Type.Composite(
  [PageQuery, Type.Object({ status: Type.Optional(Type.Union(payoutStatuses.map((status) => Type.Literal(status)), { errorMessage: `must be one of ${payoutStatuses.join(', ')}` })) })],
  { additionalProperties: false },
)

export const RejectPayoutBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', errorMessage: 'must be 1 to 500 characters', description: 'Shown to the user.' }) },
  { additionalProperties: false, examples: [{ reason: 'The bank rejected the transfer: the IBAN does not match the account holder. Check your details and request the payout again.' }] },
)

export const AdjustmentBody = Type.Object(
  {
    amount: Amount({ minimum: -1_000_000, maximum: 1_000_000, not: { const: 0 }, errorMessage: 'must be a non-zero number from -1000000 to 1000000 with at most two decimals', description: 'Positive credits, negative debits.' }),
    reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', errorMessage: 'must be 1 to 500 characters', description: 'Why: it becomes the statement line.' }),
  },
  { additionalProperties: false, examples: [{ amount: 15, reason: 'Goodwill credit: the deposit of 2 June was charged twice by the card issuer' }] },
)

export const WalletStats = Type.Object({
  platformRevenue: Money('The platform’s fees earned (its revenue account).'),
  escrowHeld: Money('Paid into orders that are not finished yet, all users together.'),
  clearingHeld: Money('Sellers’ earnings still clearing, all users together.'),
  payoutsPending: Type.Object({ count: Type.Integer(), amount: Money('Requested, awaiting staff.') }),
  currency: Type.String(),
})
