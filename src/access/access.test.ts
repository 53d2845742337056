import { describe, expect, it } from 'vitest'
import { can, permissions, roleOf, type Actor, type Permission } from './access.ts'

const actor = (overrides: Partial<Actor> = {}): Actor => ({
  id: '0190a000-0000-7000-8000-000000000001',
  email: 'someone@example.test',
  fullName: 'Some One',
  isStaff: false,
  isSuperuser: false,
  permissions: new Set<Permission>(),
  ...overrides,
})

describe('permissions', () => {
  it('lists the eleven permission values, each once', () => {
    expect([...permissions].sort()).toEqual(
      [
        'approve_services',
        'approve_withdrawals',
        'manage_kyc',
        'manage_orders',
        'manage_users',
        'resolve_disputes',
        'view_accounts',
        'view_kyc',
        'view_orders',
        'view_services',
        'view_users',
      ].sort(),
    )
    expect(new Set(permissions).size).toBe(11)
  })
})

describe('can', () => {
  it('grants a superuser every permission even with an empty permission set', () => {
    const superuser = actor({ isStaff: true, isSuperuser: true })
    for (const permission of permissions) expect(can(superuser, permission)).toBe(true)
  })

  it('grants a superuser every permission even when the staff flag is off', () => {
    const superuser = actor({ isStaff: false, isSuperuser: true })
    for (const permission of permissions) expect(can(superuser, permission)).toBe(true)
  })

  it('grants staff exactly the permissions in their set', () => {
    const staff = actor({ isStaff: true, permissions: new Set<Permission>(['view_users', 'manage_kyc']) })
    expect(can(staff, 'view_users')).toBe(true)
    expect(can(staff, 'manage_kyc')).toBe(true)
    for (const permission of permissions.filter((value) => value !== 'view_users' && value !== 'manage_kyc')) {
      expect(can(staff, permission)).toBe(false)
    }
  })

  it('grants staff without roles nothing', () => {
    const staff = actor({ isStaff: true })
    for (const permission of permissions) expect(can(staff, permission)).toBe(false)
  })

  it('grants a client nothing even when the client holds a permission set (not staff)', () => {
    const client = actor({ isStaff: false, permissions: new Set<Permission>(permissions) })
    for (const permission of permissions) expect(can(client, permission)).toBe(false)
  })
})

describe('roleOf', () => {
  it('calls a regular user a client', () => {
    expect(roleOf({ isStaff: false, isSuperuser: false })).toBe('client')
  })

  it('calls a staff member staff', () => {
    expect(roleOf({ isStaff: true, isSuperuser: false })).toBe('staff')
  })

  it('calls a superuser admin, with or without the staff flag', () => {
    expect(roleOf({ isStaff: true, isSuperuser: true })).toBe('admin')
    expect(roleOf({ isStaff: false, isSuperuser: true })).toBe('admin')
  })
})
