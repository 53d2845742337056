import { adminModule } from './admin/admin.module.ts'
import { auditModule } from './audit/audit.module.ts'
import { authModule } from './auth/auth.module.ts'
import { catalogueModule } from './catalogue/catalogue.module.ts'
import { kycModule } from './kyc/kyc.module.ts'
import { ordersModule } from './orders/orders.module.ts'
import { messagingModule } from './messaging/messaging.module.ts'
import { notificationsModule } from './notifications/notifications.module.ts'
import { offersModule } from './offers/offers.module.ts'
import { portfolioModule } from './portfolio/portfolio.module.ts'
import { reviewsModule } from './reviews/reviews.module.ts'
import { rolesModule } from './roles/roles.module.ts'
import { uploadsModule } from './uploads/uploads.module.ts'
import { usersModule } from './users/users.module.ts'
import { walletModule } from './wallet/wallet.module.ts'
import { webhooksModule } from './webhooks/webhooks.module.ts'

/**
 * Every module of the application, in dependency order: a module comes after the modules it
 * `needs`. Adding a module is its folder plus one line here.
 */
export const appModules = [uploadsModule, portfolioModule, usersModule, notificationsModule, auditModule, rolesModule, authModule, catalogueModule, walletModule, kycModule, messagingModule, ordersModule, offersModule, reviewsModule, adminModule, webhooksModule] as const
