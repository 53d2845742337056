import { readdirSync, readFileSync } from 'node:fs'

/** CPU time in µs per PostgreSQL process on this host, by process id. */
export type DatabaseCpu = Map<string, number>

/**
 * CPU time (user and system) of every PostgreSQL process on this host, read from /proc; empty
 * where there is no /proc or no local PostgreSQL. The benches run the database on the same host,
 * so `databaseCpuSince` over a measured window is what the database spent on its requests (with
 * whatever it did for others in that window, which is nothing on an idle host).
 */
export function databaseCpu(): DatabaseCpu {
  const used: DatabaseCpu = new Map()
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return used
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // the process ended between the listing and the read
    }
    const close = stat.lastIndexOf(')')
    if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue
    // After the command: state is field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(close + 2).split(' ')
    // Linux reports these in clock ticks of 1/100 s on every architecture Node runs on.
    used.set(entry, (Number(fields[11]) + Number(fields[12])) * 10_000)
  }
  return used
}

/** µs of CPU the PostgreSQL processes used since `before`: a process that ended in between is left out, one that started counts whole. */
export function databaseCpuSince(before: DatabaseCpu): number {
  let spent = 0
  for (const [pid, micros] of databaseCpu()) spent += micros - (before.get(pid) ?? 0)
  return spent
}
