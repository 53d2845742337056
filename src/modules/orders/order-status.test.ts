import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { Actor, Permission } from '../../access/access.ts'
import { allowedMoves, decide, orderStatuses, requestAcceptance, requestKinds, requestMoves, transitions, withTransitionTable, type OrderFacts } from './order-status.ts'

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

  it('docs/orders.md holds the tables generated from the same data (npm run docs:orders)', () => {
    const doc = readFileSync(new URL('../../../docs/orders.md', import.meta.url), 'utf8')
    expect(withTransitionTable(doc)).toBe(doc)
    for (const move of transitions) expect(doc).toContain(`| ${move.from} | ${move.to} |`)
    for (const kind of requestKinds) expect(doc).toContain(`| \`${kind.type}\` | \`${kind.action}\` |`)
  })

  it('offers the request moves: opening them when none is open, answering to the other party and withdrawing to the author when one is', () => {
    const actions = (status: OrderFacts['status'], who: string, open?: Parameters<typeof requestMoves>[1]) => requestMoves(order(status), open, actor(who)).map((move) => `${move.action}:${move.status}`)
    expect(actions('in_progress', 'seller')).toEqual(['request_cancellation:in_progress', 'request_extension:in_progress', 'offer_partial_refund:in_progress'])
    expect(actions('delivered', 'buyer')).toEqual(['request_cancellation:delivered'])
    expect(actions('completed', 'buyer')).toEqual([])
    expect(actions('in_progress', 'root-staff')).toEqual([])
    const cancellation = { type: 'cancellation', requestedBy: 'buyer' } as const
    expect(actions('in_progress', 'seller', cancellation)).toEqual(['accept_request:cancelled', 'decline_request:in_progress'])
    expect(actions('in_progress', 'buyer', cancellation)).toEqual(['withdraw_request:in_progress'])
    expect(actions('in_progress', 'buyer', { type: 'extension', requestedBy: 'seller' })).toEqual(['accept_request:in_progress', 'decline_request:in_progress'])
  })

  it('keeps the acceptance of a cancellation out of the status route and of the moves listed', () => {
    for (const status of ['pending', 'in_progress', 'delivered'] as const) {
      for (const by of ['buyer', 'seller', 'system'] as const) expect(requestAcceptance(status, by)).toMatchObject({ from: status, to: 'cancelled', action: 'accept_request', viaRequest: true })
      for (const who of ['buyer', 'seller']) expect(allowedMoves(order(status), actor(who)).map((move) => move.action)).not.toContain('accept_request')
    }
    expect(requestAcceptance('completed', 'seller')).toBeUndefined()
  })
})
