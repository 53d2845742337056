import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/** One value of a gauge, with its labels. */
export interface MetricSample {
  labels?: Record<string, string>
  value: number
}

/**
 * Gauges read at scrape time from the system of record (counts of rows, a pool's state), so every
 * instance reports the same figures and nothing drifts. One `collect` serves all the gauges of a
 * group, once per scrape: it must be one cheap, indexed query at most (Prometheus scrapes every
 * few seconds). It answers the samples of each gauge by name.
 */
export interface GaugeGroup {
  gauges: readonly { name: string; help: string; labelNames?: readonly string[] }[]
  collect: () => Record<string, MetricSample[]> | Promise<Record<string, MetricSample[]>>
}

// Process metrics (CPU, memory, event-loop lag, GC) describe the process, not an app: one
// registry per process, however many apps a process builds (tests build many).
let processRegistry: Registry | undefined
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 10 })
  }
  return processRegistry
}

/** Latency buckets in seconds: from a cached read to a slow search. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The application's metrics: request latency, background-job outcomes and every module's gauges. */
export function createMetrics() {
  const registry = new Registry()
  const requestDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request, by method, route template and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  })
  const jobAttempts = new Counter({
    name: 'outbox_job_attempts_total',
    help: 'Background job attempts, by topic and outcome (`ok` or `failed`).',
    labelNames: ['topic', 'outcome'] as const,
    registers: [registry],
  })

  const groups: { collect: GaugeGroup['collect']; gauges: { name: string; gauge: Gauge }[] }[] = []

  return {
    /** Records one answered request; `route` is the route template (`/api/v1/services/:serviceId`), never the raw URL. */
    observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
      requestDuration.observe({ method, route, status_code: String(statusCode) }, seconds)
    },
    /** Records one attempt of an outbox job. */
    observeJob(topic: string, succeeded: boolean): void {
      jobAttempts.inc({ topic, outcome: succeeded ? 'ok' : 'failed' })
    },
    /** Registers gauges read at scrape time. */
    addGauges(group: GaugeGroup): void {
      const gauges = group.gauges.map((gauge) => ({ name: gauge.name, gauge: new Gauge({ name: gauge.name, help: gauge.help, labelNames: gauge.labelNames ?? [], registers: [registry] }) }))
      groups.push({ collect: group.collect, gauges })
    },
    contentType: registry.contentType,
    /** The Prometheus text exposition of the process and the app, every gauge group read afresh. */
    async render(): Promise<string> {
      const samples = await Promise.all(groups.map(async (group) => group.collect()))
      groups.forEach((group, index) => {
        for (const { name, gauge } of group.gauges) {
          gauge.reset()
          for (const sample of samples[index]![name] ?? []) gauge.set(sample.labels ?? {}, sample.value)
        }
      })
      return `${await processMetrics().metrics()}\n${await registry.metrics()}`
    },
  }
}

export type Metrics = ReturnType<typeof createMetrics>
