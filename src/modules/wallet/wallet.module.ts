import { fromCents } from '../../lib/money.ts'
import { defineModule } from '../../platform/module.ts'
import { createClearanceWorker } from './clearance.service.ts'
import { clearances } from './clearance.table.ts'
import { deposits } from './deposits.table.ts'
import { ledgerAdminRoutes } from './ledger.admin.routes.ts'
import { createLedgerService } from './ledger.service.ts'
import { ledgerAccounts, ledgerEntries, ledgerTransactions } from './ledger.table.ts'
import { createSandboxProvider } from './payments.ts'
import type { AuditService } from '../audit/audit.module.ts'
import type { UsersService } from '../users/users.module.ts'
import { payoutsRoutes } from './payouts.routes.ts'
import { createPayoutsService } from './payouts.service.ts'
import { payouts } from './payouts.table.ts'
import { walletErrors } from './wallet.errors.ts'
import { walletEvents } from './wallet.events.ts'
import { walletAdminRoutes } from './wallet.admin.routes.ts'
import { walletRoutes } from './wallet.routes.ts'
import { createWalletService } from './wallet.service.ts'

/** Money: the double-entry ledger, balances and statements, deposits, earnings clearing, payouts, reconciliation. */
export const walletModule = defineModule({
  name: 'wallet',
  needs: ['users', 'audit'],
  tables: { ledgerAccounts, ledgerTransactions, ledgerEntries, deposits, payouts, clearances },
  create: ({ config, db, clock, outbox }, { users, audit }: { users: UsersService; audit: AuditService }) => {
    const ledger = createLedgerService({ clock, platformSubAccounts: config.ledgerPlatformSubAccounts, clearanceAfterMs: config.clearanceAfterMs })
    const payments = createSandboxProvider({ enabled: config.payments.sandboxEnabled })
    return {
      ...createWalletService({ db, clock, ledger, payments, currency: config.currency, users, audit }),
      payouts: createPayoutsService({ db, clock, outbox, ledger, users, audit, currency: config.currency, minPayoutCents: config.minPayoutCents }),
      /** Other modules move money in their own transaction: `ledger.transfer(tx, ...)`, a seller's earning `ledger.creditEarning(tx, ...)`. */
      ledger,
      /** The worker's clearance of earnings whose time has come. */
      ...createClearanceWorker({ db, clock, transfer: ledger.transfer }),
      /** `GET /admin/ledger/check` and `cli ledger:check`. */
      checkLedger: () => ledger.check(db),
    }
  },
  routes: (api, { config }) => async (app) => {
    await app.register(walletRoutes, { wallet: api })
    await app.register(payoutsRoutes, { payouts: api.payouts, minPayout: fromCents(config.minPayoutCents) })
    await app.register(walletAdminRoutes, { wallet: api })
    await app.register(ledgerAdminRoutes, { check: api.checkLedger })
  },
  periodic: (api, { config }) => [{ name: 'clear-earnings', everyMs: config.workerTickMs, run: () => api.clearDueEarnings() }],
  statistics: (api) => api.statistics,
  events: Object.values(walletEvents),
  errors: walletErrors,
})

export type WalletApi = ReturnType<(typeof walletModule)['create']>
export type { AccountRef, LedgerCheck, LedgerService, Transfer } from './ledger.service.ts'
export type { TransferColumns, TransferValues } from './ledger.repository.ts'
export { TRANSFER_AMOUNT_COLUMN, transferColumnsOf } from './ledger.repository.ts'
export { walletErrors } from './wallet.errors.ts'
