import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Actor, Permission } from '../../access/access.ts'
import { allowedMoves, decide, orderStatuses, transitions, withTransitionTable, type OrderFacts } from './order-status.ts'

const actor = (id: string, options: { staff?: Permission[]; superuser?: boolean } = {}): Actor => ({
  id,
  email: `${id}@example.test`,
  fullName: id,
  isStaff: options.staff !== undefined || options.superuser === true,
  isSuperuser: options.superuser ?? false,
  permissions: new Set(options.staff ?? []),
})

const order = (status: OrderFacts['status'], revisionsLeft: number | null = 1): OrderFacts => ({ status, buyerId: 'buyer', sellerId: 'seller', revisionsLeft })

describe('the order state machine (pure)', () => {
  it('names only the six statuses, and no move leaves a final status', () => {
    for (const move of transitions) {
      expect(orderStatuses).toContain(move.from)
      expect(orderStatuses).toContain(move.to)
      expect(['completed', 'cancelled']).not.toContain(move.from)
    }
  })

  it('lets the buyer ask for a revision only while revisions remain (null is unlimited)', () => {
    const buyer = actor('buyer')
    expect(allowedMoves(order('delivered', 1), buyer).map((move) => move.action)).toContain('request_revision')
    expect(allowedMoves(order('delivered', null), buyer).map((move) => move.action)).toContain('request_revision')
    expect(allowedMoves(order('delivered', 0), buyer).map((move) => move.action)).not.toContain('request_revision')
    expect(decide(order('delivered', 0), buyer, 'in_progress')).toMatchObject({ ok: false, forbidden: false })
  })

  it('never decides a delivery through the status route', () => {
    const decision = decide(order('in_progress'), actor('seller'), 'delivered')
    expect(decision.ok).toBe(false)
    if (!decision.ok) expect(decision.allowed.map((move) => move.action)).toContain('deliver')
  })

  it('answers forbidden to staff asking for a staff move without its permission, and prefers a party move for staff who buy', () => {
    expect(decide(order('pending'), actor('viewer', { staff: ['view_orders'] }), 'cancelled')).toMatchObject({ ok: false, forbidden: true })
    expect(decide(order('disputed'), actor('manager', { staff: ['manage_orders'] }), 'completed')).toMatchObject({ ok: false, forbidden: true })
    expect(decide(order('pending'), actor('manager', { staff: ['manage_orders'] }), 'completed')).toMatchObject({ ok: false, forbidden: false })
    const staffBuyer = { ...actor('buyer', { staff: ['manage_orders'] }) }
    expect(decide(order('pending'), staffBuyer, 'cancelled')).toMatchObject({ ok: true, transition: { by: 'buyer' } })
    expect(decide(order('in_progress'), staffBuyer, 'cancelled')).toMatchObject({ ok: true, transition: { by: 'staff' } })
    expect(decide(order('disputed'), actor('root', { superuser: true }), 'cancelled')).toMatchObject({ ok: true, transition: { action: 'resolve_cancelled' } })
  })

  it('docs/orders.md holds the table generated from the same data (npm run docs:orders)', () => {
    const doc = readFileSync(new URL('../../../docs/orders.md', import.meta.url), 'utf8')
    expect(withTransitionTable(doc)).toBe(doc)
    for (const move of transitions) expect(doc).toContain(`| ${move.from} | ${move.to} |`)
  })
})
