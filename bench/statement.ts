/**
 * `npm run bench:statement -- <name> [--values '{"minRating":4.5}'] [--against old.sql] [--runs 2000] [--rounds 3]`
 *
 * One prepared statement of sql/statements/ (by its name), run `--runs` times in a row on one
 * PostgreSQL connection after 300 to warm it, in `--rounds` rounds: the time per execution seen
 * by the client and the CPU the connection's backend spent on it (read from `/proc`, so with
 * PostgreSQL on this host). On a shared host this moves far less than a route's req/s, and it
 * holds nothing but the statement: the figure to compare two versions of a statement with.
 *
 * `--values` names the statement's placeholders as its file lists them (`-- $3: minPriceCents`);
 * those not named are null. The values a file lists as bound when built are bound as listed.
 * `--against` runs another file of the same form (a previous version, from
 * `git show <rev>:sql/statements/<name>.sql`) with the same values, alternating with it.
 * DATABASE_URL names the database (a seeded one: `npm run seed -- --services 100000`).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { loadConfig } from '../src/config.ts'

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { values: { type: 'string', default: '{}' }, against: { type: 'string' }, runs: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } },
})
const [name] = positionals
const { database } = loadConfig()
const runs = Number(options.runs)
const rounds = Number(options.rounds)
if (!name || database.kind !== 'postgres' || !(Number.isSafeInteger(runs) && runs > 0) || !(Number.isSafeInteger(rounds) && rounds > 0)) {
  console.error('usage: DATABASE_URL=... npm run bench:statement -- <statement name> [--values JSON] [--against file.sql] [--runs N] [--rounds N]')
  process.exit(2)
}
const named = JSON.parse(options.values) as Record<string, unknown>

/** A statement file's text and its parameters' values: named ones from `--values`, bound ones as the file lists them. */
function statementOf(path: string) {
  const file = readFileSync(path, 'utf8')
  const lines = file.split('\n')
  const values = lines.flatMap((line) => {
    const parameter = /^-- \$\d+: (.*)$/.exec(line)?.[1]
    if (parameter === undefined) return []
    const bound = /^'(.*)' \(bound when built\)$/.exec(parameter)
    return [bound ? bound[1]!.replaceAll("''", "'") : (named[parameter] ?? null)]
  })
  return { text: lines.filter((line) => !line.startsWith('--')).join('\n'), values }
}

const statements = [{ label: name, ...statementOf(new URL(`../sql/statements/${name}.sql`, import.meta.url).pathname) }]
if (options.against) statements.push({ label: options.against, ...statementOf(options.against) })

const client = new pg.Client({ connectionString: database.url })
await client.connect()
const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
/** The backend's CPU time in µs, or undefined where its /proc entry cannot be read (another host). */
function backendCpu(): number | undefined {
  try {
    const stat = readFileSync(`/proc/${backend}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return undefined
  }
}

try {
  for (let round = 1; round <= rounds; round++) {
    for (const [index, statement] of statements.entries()) {
      const query = { name: `bench_statement_${index}`, text: statement.text, values: statement.values }
      for (let run = 0; run < 300; run++) await client.query(query)
      const cpuBefore = backendCpu()
      const started = performance.now()
      for (let run = 0; run < runs; run++) await client.query(query)
      const wall = ((performance.now() - started) * 1000) / runs
      const cpuAfter = backendCpu()
      const cpu = cpuBefore === undefined || cpuAfter === undefined ? '' : `, ${((cpuAfter - cpuBefore) / runs).toFixed(0)} µs of backend CPU`
      console.log(`round ${round} ${statement.label}: ${wall.toFixed(0)} µs per execution${cpu}`)
    }
  }
} finally {
  await client.end()
}
