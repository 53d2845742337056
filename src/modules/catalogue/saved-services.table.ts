import { index, pgTable, primaryKey, timestamp, uuid } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'
import { services } from './services.table.ts'

/**
 * A person's saved services ("favourites"): one row per person and service, newest first in their
 * list. A service that stops being active stays here and shows again if it comes back.
 */
export const savedServices = pgTable(
  'saved_services',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    serviceId: uuid('service_id')
      .notNull()
      .references(() => services.id, { onDelete: 'cascade' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.userId, table.serviceId] }),
    // The list, newest first, walked by its owner's key.
    index('saved_services_user_created_idx').on(table.userId, table.createdAt, table.serviceId),
    // Deleting a service (never done by the API, which deletes softly) finds its rows.
    index('saved_services_service_idx').on(table.serviceId),
  ],
)
