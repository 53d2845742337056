import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { kindNames, linkTypes, notificationKinds, render } from './notification-kinds.ts'

const ROOT = join(import.meta.dirname, '..', '..', '..')
const rules = readFileSync(join(import.meta.dirname, 'notifications-from-events.sql'), 'utf8')
const docs = readFileSync(join(ROOT, 'docs', 'notifications.md'), 'utf8')

/** The rows of the trigger's `rule` list: `('event', 'kind' | moved, recipient, 'link type', link id)`. */
const ruleRows = [...rules.matchAll(/^\s+\('([a-z_.]+)', (?:'([a-z_.]+)'|moved), [^,]+, '([a-z_]+)',/gm)].map((match) => ({ event: match[1]!, kind: match[2], linkType: match[3]! }))

describe('the kinds of notification', () => {
  it('renders every kind the trigger writes, and links only to the types the answer declares', () => {
    expect(ruleRows.length).toBeGreaterThan(20)
    for (const row of ruleRows) {
      if (row.kind) expect(kindNames, `the rule for ${row.event}`).toContain(row.kind)
      expect(linkTypes, `the rule for ${row.event}`).toContain(row.linkType)
    }
    // The kinds a move of an order makes, named in the trigger's CASE.
    for (const kind of ['order.accepted', 'order.revision_requested', 'order.resolved', 'order.delivered', 'order.completed', 'order.cancelled', 'order.disputed']) expect(kindNames).toContain(kind)
  })

  it('lists every kind in docs/notifications.md with its e-mail default', () => {
    for (const kind of kindNames) {
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${kind}\` |`))
      expect(row, `${kind} has a row in docs/notifications.md`).toBeDefined()
      const email = row!.split('|').at(-2)!.trim()
      const expected = { own: 'on', generic: 'off', always: 'always' }[notificationKinds[kind].email]
      expect(email.startsWith(expected), `${kind}: ${email}`).toBe(true)
    }
  })

  it('reads a kind it does not know plainly, and data that lacks a field without failing', () => {
    expect(render('order.teleported', {}, 'USD')).toEqual({ title: 'Notification', body: 'order.teleported' })
    for (const kind of kindNames) expect(render(kind, {}, 'EUR').title.length).toBeGreaterThan(0)
  })
})
