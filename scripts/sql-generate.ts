import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { generatedStatementFiles, STATEMENTS_DIR } from './sql-statements.ts'

/** `npm run sql:generate`: rewrites sql/statements/, one file per prepared statement, and removes files of statements that are gone. */
const files = await generatedStatementFiles()
mkdirSync(STATEMENTS_DIR, { recursive: true })
const removed = readdirSync(STATEMENTS_DIR).filter((name) => !(name in files))
for (const name of removed) rmSync(join(STATEMENTS_DIR, name))
for (const [name, content] of Object.entries(files)) writeFileSync(join(STATEMENTS_DIR, name), content)
console.log(`wrote ${Object.keys(files).length} files to sql/statements/${removed.length > 0 ? `, removed ${removed.join(', ')}` : ''}`)
