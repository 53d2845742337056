/**
 * The write benches' measuring loop: `count` calls, `concurrency` in flight at a time, each call's
 * latency kept, and the figures printed on one line. The write benches measure each write twice:
 * through the route (`app.inject`: routing, the token, validation, the answer's serialisation) and
 * as its "direct" twin, the same service call with the caller resolved once beforehand, so the same
 * statements in the same transaction with no HTTP in front. Their ratio is what the route costs on
 * top of its database work.
 */

export interface Measured {
  name: string
  perSecond: number
  p50: number
  p99: number
  failed: number
}

/** Runs `send(worker, index)` for every index below `count`, `concurrency` at a time. A call fails when `succeeded` says so or it throws. */
export async function measure<T>(
  name: string,
  options: { count: number; concurrency: number },
  send: (worker: number, index: number) => Promise<T>,
  succeeded: (answer: T) => true | string,
): Promise<Measured> {
  const latencies: number[] = []
  let next = 0
  let failed = 0
  let firstFailure = ''
  const started = performance.now()
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, worker) => {
      while (next < options.count) {
        const index = next++
        const sent = performance.now()
        let verdict: true | string
        try {
          verdict = succeeded(await send(worker, index))
        } catch (error) {
          verdict = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
        }
        latencies.push(performance.now() - sent)
        if (verdict !== true && failed++ === 0) firstFailure = ` (first: ${verdict.slice(0, 300)})`
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? 0
  const measured = { name, perSecond: options.count / seconds, p50: percentile(50), p99: percentile(99), failed }
  console.log(`${name}: ${measured.perSecond.toFixed(0)} req/s, p50 ${measured.p50.toFixed(1)} ms, p99 ${measured.p99.toFixed(1)} ms, ${failed} failed${firstFailure}`)
  return measured
}

/** A verdict on an injected answer: the expected status, or what came instead. */
export const status =
  (expected: number) =>
  (response: { statusCode: number; body: string }): true | string =>
    response.statusCode === expected || `${response.statusCode} ${response.body}`

/** Prints the route's throughput against its direct twin's. */
export function printRatio(route: Measured, direct: Measured) {
  console.log(`${route.name} / ${direct.name}: ${(route.perSecond / direct.perSecond).toFixed(2)}`)
}
