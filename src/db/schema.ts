export * from '../modules/users/users.table.ts'
export * from '../modules/roles/roles.table.ts'
export * from '../modules/auth/auth.table.ts'
export * from '../platform/outbox/outbox.table.ts'
