import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { multipart } from '../../../test/factories/files.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { API, createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import { HOUR, MINUTE } from '../../lib/clock.ts'
import { stagingName, sweepStaging } from '../../platform/staging/staging.ts'

const MB = 1024 * 1024
const BOUNDARY = 'limit-test-boundary'

/** What a raw HTTP exchange gave. */
interface Exchange {
  head: string
  /** Body bytes written before the answer came. */
  sentBeforeAnswer: number
  /** Body bytes written in all, until the server closed or the body was done. */
  sent: number
  closedByServer: boolean
}

/**
 * Sends a multipart upload by hand over a real socket, writing the body in 64 KB chunks up to
 * `bodyBytes`. By default it stops writing when the answer comes; `keepSending` goes on, as a
 * client that reads the answer only after sending does, until the server closes.
 */
function upload(port: number, token: string, declaredLength: number | undefined, bodyBytes: number, options: { keepSending?: boolean } = {}): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1')
    let response = ''
    let sent = 0
    let answeredAt: number | undefined
    let closedByServer = false
    const headers = [
      `POST ${API}/uploads HTTP/1.1`,
      'Host: 127.0.0.1',
      `Authorization: Bearer ${token}`,
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
      declaredLength === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${declaredLength}`,
      '',
      '',
    ].join('\r\n')
    const preamble = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    const frame = (data: Buffer | string) => (declaredLength === undefined ? [`${Buffer.byteLength(data).toString(16)}\r\n`, data, '\r\n'] : [data])
    const stopped = () => answeredAt !== undefined && !options.keepSending

    socket.on('data', (data) => {
      response += data.toString('latin1')
      answeredAt ??= sent
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // Writing after the server closed: that is the point of the test, not a failure.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') closedByServer = true
      else reject(error)
    })
    socket.on('end', () => (closedByServer = true))
    socket.on('close', () => resolve({ head: response.split('\r\n\r\n')[0] ?? '', sentBeforeAnswer: answeredAt ?? sent, sent, closedByServer }))
    socket.setTimeout(20_000, () => {
      socket.destroy()
      reject(new Error(`no answer after ${sent} bytes`))
    })

    socket.write(headers)
    for (const part of frame(preamble)) socket.write(part)
    const pump = () => {
      while (!stopped() && sent < bodyBytes && !socket.destroyed) {
        sent += chunk.length
        const parts = frame(chunk)
        let flushed = true
        for (const part of parts) flushed = socket.write(part) && flushed
        if (!flushed) {
          socket.once('drain', pump)
          return
        }
      }
      // Done sending (or told to stop): closing our side lets the server finish the exchange.
      if (!socket.destroyed) socket.end()
    }
    pump()
  })
}

describe('uploads over the size limit', () => {
  let ctx: TestContext
  let port: number
  let owner: TestUser
  beforeAll(async () => {
    ctx = await createTestApp()
    await ctx.app.listen({ port: 0, host: '127.0.0.1' })
    port = (ctx.app.server.address() as AddressInfo).port
    owner = await createUser(ctx)
  })
  afterAll(() => ctx.close())

  it('refuses a declared 200 MB upload with 400 on file before reading its body, and closes the connection', async () => {
    const exchange = await upload(port, owner.accessToken, 200 * MB, 200 * MB, { keepSending: true })
    expect(exchange.head).toMatch(/^HTTP\/1\.1 400 /)
    expect(exchange.head).toMatch(/connection: close/i)
    // The answer came while the client had sent a small fraction of the body, and the server
    // read none of the rest: what the client got out is what the sockets' buffers hold.
    expect(exchange.sentBeforeAnswer).toBeLessThan(20 * MB)
    expect(exchange.sent).toBeLessThan(20 * MB)
    expect(exchange.closedByServer).toBe(true)
  })

  it('refuses a streamed (chunked) upload once it passes 10 MB, reads on to a bound and then cuts the connection', async () => {
    const exchange = await upload(port, owner.accessToken, undefined, 200 * MB, { keepSending: true })
    expect(exchange.head).toMatch(/^HTTP\/1\.1 400 /)
    expect(exchange.sentBeforeAnswer).toBeLessThan(40 * MB)
    // 10 MB of file, then at most twice the form's limit (about 20 MB) thrown away, plus buffers.
    expect(exchange.sent).toBeLessThan(48 * MB)
    expect(exchange.closedByServer).toBe(true)
  })

  it('reads to its end a body a little over the limit, and the connection then serves the next request', async () => {
    const form = multipart([{ name: 'file', filename: 'big.bin', content: Buffer.alloc(11 * MB, 0x61) }])
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1')
      let received = ''
      socket.on('data', (data) => (received += data.toString('latin1')))
      socket.on('error', reject)
      socket.on('close', () => resolve(received))
      const auth = `Authorization: Bearer ${owner.accessToken}`
      socket.write(`POST ${API}/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.payload.length}\r\n\r\n`)
      socket.write(form.payload)
      socket.write(`GET ${API}/users/me HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\nConnection: close\r\n\r\n`)
    })
    const statuses = [...answers.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1])
    expect(statuses).toEqual(['400', '200'])
  })

  it('leaves no staging file behind after a refused upload', () => {
    expect(readdirSync(ctx.config.tmpDir).filter((name) => name.endsWith('.upload'))).toEqual([])
  })
})

describe('staging files left by a crash', () => {
  const dir = join(tmpdir(), `staging-sweep-${process.pid}-${Date.now()}`)
  const stage = (name: string, ageMs = 0) => {
    const path = join(dir, name)
    writeFileSync(path, 'partial upload')
    const when = new Date(Date.now() - ageMs)
    utimesSync(path, when, when)
    return name
  }

  beforeAll(() => mkdirSync(dir, { recursive: true }))

  it("removes a dead process's files at once, keeps this process's fresh ones, and removes anything older than an hour", async () => {
    // A pid far above the kernel's maximum names no process; another host's pids are not ours to judge.
    const deadPid = 4_194_305
    const host = stagingName().split('.')[0]!
    const abandoned = [stage(`${host}.${deadPid}-a.upload`), stage(`${host}.${deadPid}-b.png`)]
    const otherHost = stage(`some-other-container.${deadPid}-c.upload`, MINUTE)
    const inFlight = stage(stagingName())
    const stale = stage(stagingName(), HOUR + MINUTE)
    const unnamedFresh = stage('legacy.upload', MINUTE)
    const unnamedStale = stage('legacy-old.upload', 2 * HOUR)

    expect(await sweepStaging(dir)).toBe(abandoned.length + 2)
    const left = readdirSync(dir).sort()
    expect(left).toEqual([inFlight, otherHost, unnamedFresh].sort())
    expect(left).not.toContain(stale)
    expect(left).not.toContain(unnamedStale)
  })

  it('treats a missing staging directory as empty', async () => {
    expect(await sweepStaging(join(dir, 'never-created'))).toBe(0)
  })

  it('sweeps the staging directory when the app starts', async () => {
    const ctx = await createTestApp({ env: {} })
    try {
      mkdirSync(ctx.config.tmpDir, { recursive: true })
      writeFileSync(join(ctx.config.tmpDir, `${stagingName().split('.')[0]!}.4194305-left-by-a-crash.upload`), 'x')
      await ctx.app.close()
      // A second app on the same data directory, as after a restart.
      const restarted = await createTestApp({ env: { DATA_DIR: ctx.config.dataDir }, database: ctx.database })
      expect(readdirSync(ctx.config.tmpDir)).toEqual([])
      await restarted.app.close()
    } finally {
      await ctx.close().catch(() => undefined)
    }
  })
})
