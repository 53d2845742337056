import { rmSync } from 'node:fs'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { and, count, countDistinct, eq, like } from 'drizzle-orm'
import type { Database } from '../../src/db/client.ts'
import { JsonText } from '../../src/db/json-sql.ts'
import { ManualClock } from '../../src/lib/clock.ts'
import { services as servicesTable } from '../../src/modules/catalogue/services.table.ts'
import { uploads } from '../../src/modules/uploads/uploads.table.ts'
import { users } from '../../src/modules/users/users.table.ts'
import { createInProcessHub } from '../../src/platform/realtime/in-process-hub.ts'
import { createStorage } from '../../src/platform/storage/create-storage.ts'
import { DEMO_EMAIL_DOMAIN, seedDemo, type DemoSeedDeps } from '../../src/seed/demo.ts'
import { createContainer } from '../../src/container.ts'
import { MemoryMailer, openTestDatabase, testConfig } from '../setup/test-app.ts'

describe('demo seed', () => {
  let database: Database
  let drop: () => Promise<void>
  let deps: DemoSeedDeps
  let dataDir: string

  beforeAll(async () => {
    ;({ database, drop } = await openTestDatabase())
    const config = testConfig()
    dataDir = config.dataDir
    const clock = new ManualClock('2026-03-01T12:00:00Z')
    const container = createContainer({ config, db: database.db, clock, mailer: new MemoryMailer(), storage: createStorage(config.storage), realtime: createInProcessHub(config.realtime), logger: pino({ level: 'silent' }) })
    deps = { db: container.db, clock, container, tmpDir: config.tmpDir }
  })
  afterAll(async () => {
    await drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  const totals = async () => {
    const { db } = database
    const [demoUsers] = await db.select({ total: count() }).from(users).where(like(users.email, `%@${DEMO_EMAIL_DOMAIN}`))
    const [offers] = await db.select({ total: count(), categories: countDistinct(servicesTable.categoryId) }).from(servicesTable)
    const [active] = await db.select({ total: count() }).from(servicesTable).where(eq(servicesTable.status, 'active'))
    const [banners] = await db.select({ total: count() }).from(uploads).where(and(eq(uploads.objectType, 'service'), eq(uploads.tag, 'service_banner')))
    const [avatars] = await db.select({ total: count() }).from(uploads).where(eq(uploads.tag, 'avatar'))
    return { users: demoUsers!.total, services: offers!.total, categories: offers!.categories, active: active!.total, banners: banners!.total, avatars: avatars!.total }
  }

  it('fills a believable marketplace once, and a second run adds nothing', async () => {
    const first = await seedDemo(deps)
    expect(first).toEqual({ usersCreated: 20, avatarsCreated: 20, servicesCreated: 60 })
    const after = await totals()
    expect(after).toMatchObject({ users: 20, services: 60, active: 60, banners: 60, avatars: 20 })
    // Every default subcategory (34) has at least one service.
    expect(after.categories).toBeGreaterThanOrEqual(30)

    // The public catalogue shows them, with banners, sellers and a starting price that matches the packages.
    const page = (await deps.container.catalogue.listServices({ page: 1, limit: 100, category: 'graphics-design' })).parse()
    expect(page.pagination.total).toBeGreaterThan(5)
    const found = await deps.container.catalogue.getService(null, page.items[0]!.id)
    const detail = found instanceof JsonText ? found.parse() : found
    expect(detail.status).toBe('active')
    expect(detail.packages.length).toBeGreaterThanOrEqual(1)
    expect(detail.banner).toContain('/service_banner/')
    expect(detail.startingPrice).toBe(Math.min(...detail.packages.map((item) => item.price)))

    expect(await seedDemo(deps)).toEqual({ usersCreated: 0, avatarsCreated: 0, servicesCreated: 0 })
    expect(await totals()).toEqual(after)
  }, 60_000)
})
