import { Type } from '@sinclair/typebox'
import { sql, type SQLWrapper } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { describe, expect, it } from 'vitest'
import type { PricedChoice } from '../modules/catalogue/catalogue.module.ts'
import type { PlacedOrder } from '../modules/messaging/messaging.module.ts'
import { orders } from '../modules/orders/orders.table.ts'
import type { PlacementStatementValues, preparePlacement } from '../modules/orders/orders.repository.ts'
import type { Executor } from './client.ts'
import { jsonFieldsSql, lentRelation, placeholdersOf, tableRelation } from './fragments.ts'
import { preparedSql } from './statements.ts'

const text = (built: SQLWrapper) => new PgDialect().sqlToQuery(built.getSQL()).sql

describe('SQL lent across modules, typed at the boundary', () => {
  it("a lent relation names its output columns in its body, and the borrower reads them under its own alias", () => {
    const relation = lentRelation<{ totalCents: number; packageId: string | null }>({ totalCents: 'total_cents', packageId: 'package_id' }, (as) => sql`select 1 as ${as.totalCents}, null as ${as.packageId}`)
    expect(text(relation.sql)).toBe('select 1 as "total_cents", null as "package_id"')
    const columns = relation.columnsOf('priced')
    expect(text(sql`select ${columns.totalCents}, ${columns.packageId} from priced`)).toBe('select "priced"."total_cents", "priced"."package_id" from priced')
  })

  it('refuses names that are not plain identifiers', () => {
    expect(() => lentRelation<{ a: number }>({ a: 'a"; drop table users; --' }, () => sql``)).toThrow(/not a plain SQL identifier/)
    expect(() => lentRelation<{ a: number }>({ a: 'a' }, () => sql``).columnsOf('Priced')).toThrow(/not a plain SQL identifier/)
  })

  it("a table's relation under a name reads the columns by their keys, named as the table names them", () => {
    const placed = tableRelation('placed', orders, ['id', 'buyerId', 'createdAt'])
    expect(text(sql`select ${placed.columns.buyerId}, ${placed.columns.createdAt} from ${placed.name}`)).toBe('select "placed"."buyer_id", "placed"."created_at" from "placed"')
  })

  it("a lent JSON object's keys are read by the keys of its schema", () => {
    const Offer = Type.Object({ sellerId: Type.String(), title: Type.String() })
    const offer = jsonFieldsSql(Offer, sql`read.offer`)
    expect(text(sql`select ${offer.sellerId}::uuid, ${offer.title}`)).toBe(`select (read.offer->>'sellerId')::uuid, (read.offer->>'title')`)
  })

  it('does not compile a borrower that reads a name the lender does not lend, or misses a placeholder', () => {
    const statement = preparedSql<{ id: string; limit: number }, { one: number }>('test_fragments_types_only', sql`select 1 as one where ${sql.placeholder('id')}::uuid is not null limit ${sql.placeholder('limit')}::int`)
    const p = placeholdersOf<{ id: string; limit: number }>()
    // These functions are never called: they exist for the compiler (`npx tsc --noEmit` fails if an expected error is missing).
    const typeChecks = [
      (executor: Executor) => {
        // @ts-expect-error `limit` is a placeholder of the statement: values without it do not compile.
        return statement(executor, { id: 'x' })
      },
      (run: ReturnType<typeof preparePlacement>, executor: Executor, values: PlacementStatementValues) => {
        const { orderConversationId: _conversation, ...withoutConversation } = values
        // @ts-expect-error the placement writes the order's conversation: its placeholder is required.
        return run(executor, withoutConversation)
      },
      () => {
        // @ts-expect-error `offset` is not a placeholder of these values.
        return p('offset')
      },
      (priced: ReturnType<typeof lentRelation<PricedChoice>>) => {
        // @ts-expect-error the catalogue lends `totalCents`, not `total_cents`.
        return priced.columnsOf('priced').total_cents
      },
      (placed: PlacedOrder) => {
        // @ts-expect-error the orders module lends the new order's id, parties and time, not its total.
        return placed.columns.totalCents
      },
    ]
    expect(typeChecks).toHaveLength(5)
  })
})
