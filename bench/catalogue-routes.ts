/**
 * What the catalogue benches share: the read routes of the catalogue (with the sample they are
 * drawn from: the newest active service, its title's words, a word of its description), and the
 * load generator in its own process (bench/load-worker.ts).
 */
import { fork, type ChildProcess } from 'node:child_process'

/** Runs one statement on the bench's own connection. */
export type Run = (name: string, text: string, params: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>

export interface Route {
  name: string
  path: string
  connections: number
  /** Sent as `authorization: Bearer <token>`. */
  token?: string
}

export interface CatalogueSample {
  id: string
  title: string
  word: string | null
}

/**
 * The sample: the newest active service, its title's words as a narrow search, a word of its
 * description alone as a rare search (fewer than three matches: the correction is tried).
 */
export async function catalogueSample(run: Run): Promise<{ sample: CatalogueSample; servicesTotal: number }> {
  const [sample] = (
    await run('bench_sample', `select id, title, substring(description from 'number ([0-9]+)') as word from services where status = 'active' and deleted_at is null order by created_at desc, id desc limit 1`, [])
  ).rows as unknown as CatalogueSample[]
  if (!sample) throw new Error('no active service: seed first (npm run seed -- --services 100000)')
  const [{ total: servicesTotal } = { total: 0 }] = (await run('bench_total', `select count(*)::int as total from services where status = 'active' and deleted_at is null`, [])).rows as { total: number }[]
  return { sample, servicesTotal }
}

/** The catalogue's read routes, one service and the lists of every shape, at `connections` (the broad search at `searchConnections`). */
export function catalogueRoutes(sample: CatalogueSample, connections: number, searchConnections: number): Route[] {
  const narrow = sample.title
    .replace(/^I will /, '')
    .replace(/\ba\b/g, '')
    .replace(/\s+/g, ' ')
    .trim()
  return [
    { name: 'GET /services/{id}', path: `/services/${sample.id}`, connections },
    { name: 'GET /services?category=graphics-design&sortBy=price', path: '/services?category=graphics-design&sortBy=price', connections },
    { name: `GET /services?search=${narrow} (narrow)`, path: `/services?search=${encodeURIComponent(narrow)}`, connections },
    { name: 'GET /services?search=logo design (broad)', path: '/services?search=logo%20design', connections: searchConnections },
    { name: `GET /services?search=${sample.word} (rare)`, path: `/services?search=${sample.word}`, connections },
    { name: 'GET /services?search=logo design&facets=true (faceted broad)', path: '/services?search=logo%20design&facets=true', connections },
    { name: 'GET /services?deliveryDays=3', path: '/services?deliveryDays=3', connections },
    { name: 'GET /services?minRating=4.5', path: '/services?minRating=4.5', connections },
    { name: 'GET /services?sellerLevel=level_two,top_rated', path: '/services?sellerLevel=level_two,top_rated', connections },
    { name: 'GET /services?sellerOnline=true', path: '/services?sellerOnline=true', connections },
    { name: 'GET /services?tags=logo design', path: '/services?tags=logo%20design', connections },
    { name: 'GET /categories', path: '/categories', connections },
    { name: 'GET /categories/{slug}', path: '/categories/graphics-design', connections },
  ]
}

export interface LoadJob {
  url: string
  method?: 'GET' | 'POST'
  body?: string
  headers?: Record<string, string>
  connections: number
  durationMs: number
}

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  errors: number
  requests: number
  statuses: Record<number, number>
}

/** A load generator in a process of its own; `workers` collects the processes for the caller to kill. */
export function loader(workers: ChildProcess[]): (job: LoadJob) => Promise<LoadResult> {
  const child = fork(new URL('./load-worker.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] })
  workers.push(child)
  let next = 0
  return (job) =>
    new Promise((resolve) => {
      const id = ++next
      const listener = (message: { id: number }) => {
        if (message.id !== id) return
        child.off('message', listener)
        resolve(message as unknown as LoadResult)
      }
      child.on('message', listener)
      child.send({ id, ...job })
    })
}

export const median = (numbers: number[]): number => {
  const sorted = [...numbers].sort((a, b) => a - b)
  return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!
}
