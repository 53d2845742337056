import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestContext } from '../../test/setup/test-app.ts'
import { MINUTE } from '../lib/clock.ts'

/** The value of one series in a Prometheus text exposition, or undefined when absent. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  const scrape = async (headers: Record<string, string> = {}) => ctx.app.inject({ method: 'GET', url: '/metrics', headers })

  it('serves the Prometheus text format with process metrics, outside the API prefix', async () => {
    const response = await scrape()
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(response.body).toContain('# TYPE nodejs_eventloop_lag_seconds gauge')
    expect(response.body).toContain('# TYPE process_cpu_user_seconds_total counter')
  })

  it('times answers by route template and status, never by raw URL', async () => {
    const id = '0196a000-0000-7000-8000-000000000000'
    expect((await ctx.app.inject({ method: 'GET', url: `/api/v1/services/${id}` })).statusCode).toBe(404)
    expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200)
    const text = (await scrape()).body
    expect(valueOf(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/services/:serviceId",status_code="404"}')).toBe(1)
    expect(valueOf(text, 'http_request_duration_seconds_count{method="GET",route="/health",status_code="200"}')).toBeGreaterThanOrEqual(1)
    expect(text).not.toContain(id)
  })

  it('reports the outbox per topic: waiting jobs, the lag of the oldest due one, attempts by outcome and dead jobs', async () => {
    const topic = 'metrics-test-topic'
    await ctx.database.db.transaction((tx) => ctx.app.container.outbox.enqueue(tx, { topic, payload: {}, maxAttempts: 1 }))
    ctx.clock.advance(2 * MINUTE)
    let text = (await scrape()).body
    expect(valueOf(text, `outbox_jobs_waiting{topic="${topic}"}`)).toBe(1)
    expect(valueOf(text, `outbox_oldest_due_seconds{topic="${topic}"}`)).toBe(120)

    // No handler for the topic: the only attempt fails and the job is dead.
    await ctx.app.container.worker.drain()
    text = (await scrape()).body
    expect(valueOf(text, `outbox_job_attempts_total{topic="${topic}",outcome="failed"}`)).toBe(1)
    expect(valueOf(text, `outbox_jobs_dead{topic="${topic}"}`)).toBe(1)
    expect(valueOf(text, `outbox_jobs_waiting{topic="${topic}"}`)).toBe(0)
  })
})

describe('GET /metrics with METRICS_TOKEN', () => {
  let ctx: TestContext
  const token = 'metrics-token-0123456789'
  beforeAll(async () => {
    ctx = await createTestApp({ env: { METRICS_TOKEN: token } })
  })
  afterAll(() => ctx.close())

  it('answers 401 without the token or with another one', async () => {
    for (const headers of [{}, { authorization: 'Bearer metrics-token-wrong-value' }, { authorization: `Basic ${token}` }]) {
      const response = await ctx.app.inject({ method: 'GET', url: '/metrics', headers })
      expect(response.statusCode).toBe(401)
      expect(response.json().error.code).toBe('UNAUTHENTICATED')
    }
  })

  it('serves the metrics with the token', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } })
    expect(response.statusCode).toBe(200)
    expect(response.body).toContain('http_request_duration_seconds')
  })
})

describe('GET /metrics in production without METRICS_TOKEN', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp({ env: { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:2525' } })
  })
  afterAll(() => ctx.close())

  it('is off: 404', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(404)
    expect(response.json().error.code).toBe('NOT_FOUND')
  })
})
