import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TIMEOUT = 60_000

/** The test process's environment without anything the server would pick up by accident. */
function serverEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...overrides }
  for (const name of ['DATABASE_URL', 'SMTP_URL', 'REDIS_URL', 'S3_BUCKET', 'NODE_ENV', 'PORT']) if (!(name in overrides)) delete env[name]
  return env
}

function runServer(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env, timeout: TIMEOUT }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr })
    })
  })
}

/** A port on the loopback that nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const expectOneLine = (stderr: string) => {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '' && !line.includes('ExperimentalWarning') && !line.includes('--trace-warnings'))
  expect(lines, stderr).toHaveLength(1)
  expect(stderr).not.toMatch(/^\s+at /m)
  return lines[0]!
}

describe('start-up errors', () => {
  let dataDir: string
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marketplace-startup-'))
  })
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('names DATABASE_URL in one line when nothing answers on the database port', async () => {
    const port = await closedPort()
    const result = await runServer(serverEnv({ DATA_DIR: dataDir, DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/marketplace` }))
    expect(result.code).toBe(1)
    const line = expectOneLine(result.stderr)
    expect(line).toBe(`Cannot connect to PostgreSQL at 127.0.0.1:${port}: connection refused (is it running?). Check DATABASE_URL.`)
    expect(result.stderr).not.toContain('s3cret')
  })

  it.runIf(process.env.TEST_DATABASE_URL)('names the missing database and DATABASE_URL in one line', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!)
    url.pathname = `/mk_missing_${process.pid}`
    const result = await runServer(serverEnv({ DATA_DIR: dataDir, DATABASE_URL: url.toString() }))
    expect(result.code).toBe(1)
    const line = expectOneLine(result.stderr)
    expect(line).toMatch(new RegExp(`^The database "mk_missing_${process.pid}" does not exist on .+\\. Create it .* or check DATABASE_URL\\.$`))
  })

  it('names PORT in one line when the port is taken', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const result = await runServer(serverEnv({ DATA_DIR: mkdtempSync(join(tmpdir(), 'marketplace-port-')), PORT: String(port), HOST: '127.0.0.1' }))
      expect(result.code).toBe(1)
      expect(expectOneLine(result.stderr)).toBe(`Port ${port} on 127.0.0.1 is already in use. Stop the other process or set PORT.`)
    } finally {
      server.close()
    }
    // The server creates and migrates a fresh embedded database before it binds the port.
  }, TIMEOUT)
})

describe('npm start under a process manager', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops the server when ${signal} is sent to npm`, async () => {
      const port = await closedPort()
      const dir = mkdtempSync(join(tmpdir(), 'marketplace-npm-start-'))
      const npm = spawn('npm', ['start'], { cwd: ROOT, env: serverEnv({ DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
      const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)))
      try {
        await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status, { timeout: TIMEOUT, interval: 200 }).toBe(200)
        npm.kill(signal)
        expect(await exited).toBe(0)
        expect(output).toContain('"msg":"shutting down"')
        // Nothing is left answering on the port.
        await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow()
      } finally {
        npm.kill('SIGKILL')
        rmSync(dir, { recursive: true, force: true })
      }
    }, TIMEOUT)
  }
})

describe('the first administrator at npm start', () => {
  /** Starts the server as `npm start` does and waits until it answers; `stop` ends it with SIGTERM. */
  async function startServer(env: NodeJS.ProcessEnv, port: number) {
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)))
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.status, { timeout: TIMEOUT, interval: 200 }).toBe(200)
    return {
      output: () => output,
      stop: async () => {
        server.kill('SIGTERM')
        expect(await exited).toBe(0)
      },
      kill: () => server.kill('SIGKILL'),
    }
  }

  const login = async (port: number, email: string, password: string) => {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })
    return { status: response.status, body: (await response.json()) as { data?: { user: { role: string; fullName: string } } } }
  }

  it('creates the superuser of SUPERUSER_* on the first start, and leaves it alone on a start with other values', async () => {
    const port = await closedPort()
    const dir = mkdtempSync(join(tmpdir(), 'marketplace-first-admin-'))
    const base = { DATA_DIR: dir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' }
    const first = await startServer(serverEnv({ ...base, SUPERUSER_EMAIL: 'root@example.test', SUPERUSER_PASSWORD: 'Sup3r-secret', SUPERUSER_FULL_NAME: 'Site Admin' }), port)
    try {
      const session = await login(port, 'root@example.test', 'Sup3r-secret')
      expect(session.status).toBe(200)
      expect(session.body.data?.user).toMatchObject({ role: 'admin', fullName: 'Site Admin' })
      expect(first.output()).toContain('first superuser created from SUPERUSER_EMAIL')
      expect(first.output()).not.toContain('Sup3r-secret')
      await first.stop()

      const second = await startServer(serverEnv({ ...base, SUPERUSER_EMAIL: 'other@example.test', SUPERUSER_PASSWORD: 'An0ther-secret' }), port)
      try {
        expect(second.output()).toContain('a superuser exists: SUPERUSER_EMAIL and SUPERUSER_PASSWORD are not used')
        expect((await login(port, 'other@example.test', 'An0ther-secret')).status).toBe(401)
        expect((await login(port, 'root@example.test', 'Sup3r-secret')).status).toBe(200)
        await second.stop()
      } finally {
        second.kill()
      }
    } finally {
      first.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 2 * TIMEOUT)
})
