/**
 * The benchmark's load generator, in its own process so that it does not share an event loop
 * with the servers it measures. It receives jobs over IPC (`{ url, method, body, headers,
 * connections, durationMs }`), keeps `connections` keep-alive connections busy for that long, and answers
 * with the number of requests, errors and latency percentiles.
 */
import http from 'node:http'
import type { LoadJob } from './catalogue-routes.ts'

interface Job extends LoadJob {
  id: number
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!)

function once(agent: http.Agent, target: URL, job: Job): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { agent, host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: job.method ?? 'GET', headers: { ...job.headers, ...(job.body ? { 'content-type': 'application/json' } : {}) } },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(job.body)
  })
}

async function run(job: Job) {
  const target = new URL(job.url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections })
  const latencies: number[] = []
  let errors = 0
  const statuses: Record<number, number> = {}
  const started = performance.now()
  const deadline = started + job.durationMs
  await Promise.all(
    Array.from({ length: job.connections }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now()
        try {
          const status = await once(agent, target, job)
          statuses[status] = (statuses[status] ?? 0) + 1
          if (status >= 400) errors++
          else latencies.push(performance.now() - sent)
        } catch {
          errors++
        }
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return { id: job.id, requests: latencies.length, errors, statuses, seconds, rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

process.on('message', (job: Job) => {
  void run(job).then((result) => process.send!(result))
})
