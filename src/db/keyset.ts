import { and, eq, lt, or, type Column, type GetColumnData, type SQL } from 'drizzle-orm'

/**
 * The rows after a page's last row in an order descending on two columns (a time, then an id that
 * breaks ties): the keyset condition of a "newest first" list read by cursor.
 */
export function afterDescending<First extends Column, Second extends Column>(first: First, firstValue: GetColumnData<First, 'raw'>, second: Second, secondValue: GetColumnData<Second, 'raw'>): SQL | undefined {
  return or(lt(first, firstValue), and(eq(first, firstValue), lt(second, secondValue)))
}
