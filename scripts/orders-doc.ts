/**
 * `npm run docs:orders`: writes the order transition table of `src/modules/orders/order-status.ts`
 * into docs/orders.md between its markers. A test fails when the file and the data differ.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { withTransitionTable } from '../src/modules/orders/order-status.ts'

const file = fileURLToPath(new URL('../docs/orders.md', import.meta.url))
const current = readFileSync(file, 'utf8')
const next = withTransitionTable(current)
if (next === current) console.log('docs/orders.md is up to date')
else {
  writeFileSync(file, next)
  console.log('docs/orders.md: transition table rewritten')
}
