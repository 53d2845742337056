import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The PgBouncer the PostgreSQL pass runs through, when one of 1.21 or later is on the machine
 * (scripts/pgbouncer.sh finds it; TEST_PGBOUNCER=off runs the pass directly). Transaction mode
 * with `max_prepared_statements`, as docs/operations.md recommends for production, in front of the
 * PostgreSQL of `directUrl`, for every database (each test file's clone included).
 */
export async function startPgBouncer(directUrl: string): Promise<{ url: string; stop: () => void } | undefined> {
  if (process.env.TEST_PGBOUNCER === 'off') return undefined
  const found = spawnSync('bash', [join(ROOT, 'scripts', 'pgbouncer.sh'), '--find'], { encoding: 'utf8' })
  const binary = found.status === 0 ? found.stdout.trim() : ''
  if (!binary) return undefined
  const direct = new URL(directUrl)
  const user = decodeURIComponent(direct.username || 'postgres')
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'))
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`)
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${direct.hostname} port=${direct.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_prepared_statements = 1000',
      'max_client_conn = 2000',
      'default_pool_size = 10',
      'server_reset_query =',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  )
  // PgBouncer refuses to run as root; started by root, it runs as the database's user.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const owner = spawnSync('id', ['-u', user], { encoding: 'utf8' })
    const uid = Number(owner.stdout.trim())
    const gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim())
    if (owner.status !== 0) throw new Error(`PgBouncer must not run as root, and there is no system user ${user} to run it as`)
    chmodSync(dir, 0o755)
    for (const file of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(dir, file), uid, gid)
  }
  const child = spawn(binary, [...(asRoot ? ['-u', user] : []), join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'ignore', 'pipe'] })
  let errors = ''
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`PgBouncer (${binary}) exited: ${errors}`)
    if (await accepts(port)) break
    if (attempt > 100) throw new Error(`PgBouncer (${binary}) did not listen on ${port}: ${errors}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const through = new URL(directUrl)
  through.hostname = '127.0.0.1'
  through.port = String(port)
  return {
    url: through.toString(),
    stop: () => {
      child.kill('SIGTERM')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
