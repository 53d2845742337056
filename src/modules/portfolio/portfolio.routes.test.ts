import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, request, type TestContext, expectError } from '../../../test/setup/test-app.ts'
import { createUser, type TestUser } from '../../../test/factories/users.ts'
import { newId } from '../../lib/ids.ts'
import { PORTFOLIO_LIMIT } from './portfolio.service.ts'
import { education, experiences, projects, skills, type PortfolioTable } from './portfolio.table.ts'

type Json = Record<string, unknown>
type Stored = Json & { id: string }

interface Kind {
  url: string
  table: PortfolioTable
  noun: string
  /** A complete, valid create body. */
  valid: Json
  /** A valid partial update and what it changes. */
  change: Json
  /** The row a test inserts directly (the limit test), without id and owner. */
  seed: (index: number) => Json
  /** Fields in a record besides id, userId and the timestamps. */
  fields: string[]
}

const kinds: Kind[] = [
  {
    url: '/users/me/skills',
    table: skills,
    noun: 'Skill',
    valid: { name: 'TypeScript', level: 'expert', yearsOfExperience: 6.5 },
    change: { level: 'advanced' },
    seed: (index) => ({ name: `Skill ${index}`, level: 'beginner', yearsOfExperience: 1 }),
    fields: ['level', 'name', 'yearsOfExperience'],
  },
  {
    url: '/users/me/projects',
    table: projects,
    noun: 'Project',
    valid: {
      title: 'Marketplace API',
      description: 'Escrow, ledger and chat.',
      url: 'https://example.com/marketplace',
      startDate: '2023-01-15',
      endDate: '2023-06-30',
      technologies: ['TypeScript', 'PostgreSQL'],
    },
    change: { title: 'Marketplace backend' },
    seed: (index) => ({ title: `Project ${index}`, startDate: '2020-01-01' }),
    fields: ['description', 'endDate', 'startDate', 'technologies', 'title', 'url'],
  },
  {
    url: '/users/me/experiences',
    table: experiences,
    noun: 'Experience',
    valid: { company: 'Acme', position: 'Backend engineer', description: 'Payments.', location: 'Lisbon', startDate: '2019-03-01', endDate: '2022-08-31' },
    change: { position: 'Staff engineer' },
    seed: (index) => ({ company: `Company ${index}`, position: 'Engineer', startDate: '2020-01-01' }),
    fields: ['company', 'description', 'endDate', 'location', 'position', 'startDate'],
  },
  {
    url: '/users/me/education',
    table: education,
    noun: 'Education record',
    valid: {
      institution: 'University of Porto',
      degree: 'MSc',
      fieldOfStudy: 'Computer Science',
      startDate: '2014-09-15',
      endDate: '2016-07-20',
      grade: '17/20',
      description: 'Thesis on query planning.',
    },
    change: { grade: '18/20' },
    seed: (index) => ({ institution: `School ${index}`, degree: 'BSc', fieldOfStudy: 'Physics', startDate: '2010-09-01' }),
    fields: ['degree', 'description', 'endDate', 'fieldOfStudy', 'grade', 'institution', 'startDate'],
  },
]

const dated = kinds.filter((kind) => kind.table !== skills)

describe('portfolio routes', () => {
  let ctx: TestContext
  beforeAll(async () => {
    ctx = await createTestApp()
  })
  afterAll(() => ctx.close())

  const rowIn = async (table: PortfolioTable, id: string): Promise<Json | undefined> => {
    const [row] = await ctx.database.db.select().from(table).where(eq(table.id, id))
    return row
  }

  const add = (owner: TestUser, url: string, payload: Json) => request(ctx.app, { method: 'POST', url, token: owner.accessToken, payload })
  const addOk = async (owner: TestUser, url: string, payload: Json): Promise<Stored> => {
    const response = await add(owner, url, payload)
    expect(response.statusCode).toBe(201)
    return response.json().data
  }
  const list = async (owner: TestUser, url: string): Promise<Stored[]> => {
    const response = await request(ctx.app, { method: 'GET', url, token: owner.accessToken })
    expect(response.statusCode).toBe(200)
    return response.json().data
  }
  const patch = (owner: TestUser, url: string, payload: Json, method: 'PATCH' | 'PUT' = 'PATCH') =>
    request(ctx.app, { method, url, token: owner.accessToken, payload })

  describe.each(kinds)('$url', (kind) => {
    const { url } = kind

    it('refuses every verb without a token (401 UNAUTHENTICATED)', async () => {
      const id = newId()
      for (const [method, path] of [
        ['GET', url],
        ['POST', url],
        ['PUT', `${url}/${id}`],
        ['PATCH', `${url}/${id}`],
        ['DELETE', `${url}/${id}`],
      ] as const) {
        expectError(await request(ctx.app, { method, url: path, payload: method === 'GET' || method === 'DELETE' ? undefined : kind.change }), 401, 'UNAUTHENTICATED')
      }
    })

    it('adds a record for the caller (201) with exactly the record fields, and stores it', async () => {
      const owner = await createUser(ctx)
      const response = await add(owner, url, kind.valid)
      expect(response.statusCode).toBe(201)
      const body = response.json()
      expect(body.success).toBe(true)
      expect(Object.keys(body.data).sort()).toEqual(['createdAt', 'id', 'updatedAt', 'userId', ...kind.fields].sort())
      expect(body.data).toMatchObject({ ...kind.valid, userId: owner.user.id, createdAt: ctx.clock.now().toISOString(), updatedAt: ctx.clock.now().toISOString() })
      expect(await rowIn(kind.table, body.data.id)).toMatchObject({ ...kind.valid, userId: owner.user.id })
    })

    it("lists only the caller's records", async () => {
      const owner = await createUser(ctx)
      const other = await createUser(ctx)
      const mine = await addOk(owner, url, kind.valid)
      await addOk(other, url, kind.valid)
      expect(await list(owner, url)).toEqual([mine])
      expect(await list(await createUser(ctx), url)).toEqual([])
    })

    it.each(['PUT', 'PATCH'] as const)('%s changes only the fields sent and bumps updatedAt', async (method) => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, kind.valid)
      ctx.clock.advance(60_000)
      const response = await patch(owner, `${url}/${created.id}`, kind.change, method)
      expect(response.statusCode).toBe(200)
      const updated = response.json().data
      expect(updated).toEqual({ ...created, ...kind.change, updatedAt: ctx.clock.now().toISOString() })
      expect(await rowIn(kind.table, created.id)).toMatchObject(kind.change)
    })

    it("answers 404 NOT_FOUND for another user's record, an unknown id and a malformed id, and changes nothing", async () => {
      const owner = await createUser(ctx)
      const intruder = await createUser(ctx)
      const created = await addOk(owner, url, kind.valid)
      for (const id of [created.id, newId(), 'not-a-uuid', '123']) {
        for (const method of ['PUT', 'PATCH'] as const) {
          expectError(await patch(intruder, `${url}/${id}`, kind.change, method), 404, 'NOT_FOUND')
        }
        expectError(await request(ctx.app, { method: 'DELETE', url: `${url}/${id}`, token: intruder.accessToken }), 404, 'NOT_FOUND')
      }
      expect(await rowIn(kind.table, created.id)).toMatchObject(kind.valid)
      expect(await list(owner, url)).toEqual([created])
    })

    it('deletes a record (200 with a message) and then answers 404 for it', async () => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, kind.valid)
      const response = await request(ctx.app, { method: 'DELETE', url: `${url}/${created.id}`, token: owner.accessToken })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, data: { message: `${kind.noun} deleted` } })
      expect(await rowIn(kind.table, created.id)).toBeUndefined()
      expectError(await request(ctx.app, { method: 'DELETE', url: `${url}/${created.id}`, token: owner.accessToken }), 404, 'NOT_FOUND')
    })

    it('refuses fields the client may not set, such as userId and id (400 naming each)', async () => {
      const owner = await createUser(ctx)
      const other = await createUser(ctx)
      expectError(await add(owner, url, { ...kind.valid, userId: other.user.id }), 400, 'VALIDATION_ERROR', ['userId'])
      expectError(await add(owner, url, { ...kind.valid, id: newId(), isFeatured: true }), 400, 'VALIDATION_ERROR', ['id', 'isFeatured'])
      const created = await addOk(owner, url, kind.valid)
      expectError(await patch(owner, `${url}/${created.id}`, { userId: other.user.id }), 400, 'VALIDATION_ERROR', ['userId'])
      expectError(await patch(owner, `${url}/${created.id}`, { ...kind.change, createdAt: '2020-01-01T00:00:00.000Z' }, 'PUT'), 400, 'VALIDATION_ERROR', [
        'createdAt',
      ])
      expect(await list(other, url)).toEqual([])
    })

    it('refuses an update with no field (400 on body)', async () => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, kind.valid)
      expectError(await patch(owner, `${url}/${created.id}`, {}), 400, 'VALIDATION_ERROR', ['body'])
      expectError(await request(ctx.app, { method: 'PUT', url: `${url}/${created.id}`, token: owner.accessToken }), 400, 'VALIDATION_ERROR', ['body'])
    })

    it(`refuses record ${PORTFOLIO_LIMIT + 1} (422 PORTFOLIO_LIMIT_REACHED) and accepts one again after a delete`, async () => {
      const owner = await createUser(ctx)
      const now = ctx.clock.now()
      const rows = Array.from({ length: PORTFOLIO_LIMIT }, (_, index) => ({ ...kind.seed(index), id: newId(), userId: owner.user.id, createdAt: now, updatedAt: now }))
      await ctx.database.db.insert(kind.table).values(rows as never)
      expectError(await add(owner, url, kind.valid), 422, 'PORTFOLIO_LIMIT_REACHED')
      expect(await list(owner, url)).toHaveLength(PORTFOLIO_LIMIT)
      // Another user's limit is their own.
      await addOk(await createUser(ctx), url, kind.valid)
      const [first] = await list(owner, url)
      expect((await request(ctx.app, { method: 'DELETE', url: `${url}/${first!.id}`, token: owner.accessToken })).statusCode).toBe(200)
      await addOk(owner, url, kind.valid)
    })
  })

  describe.each(dated)('dates of $url', (kind) => {
    const { url } = kind

    it('refuses a start date that is not a real YYYY-MM-DD date (400 on startDate)', async () => {
      const owner = await createUser(ctx)
      for (const startDate of ['2024-13-01', '01/02/2024', '2023-02-29', '2024-1-5', '2024-01-05T00:00:00Z', '', 20240105, null]) {
        expectError(await add(owner, url, { ...kind.valid, startDate }), 400, 'VALIDATION_ERROR', ['startDate'])
      }
      expectError(await add(owner, url, { ...kind.valid, endDate: '31/12/2024' }), 400, 'VALIDATION_ERROR', ['endDate'])
    })

    it('requires the start date (400 on startDate)', async () => {
      const owner = await createUser(ctx)
      const { startDate: _startDate, ...withoutStart } = kind.valid
      expectError(await add(owner, url, withoutStart), 400, 'VALIDATION_ERROR', ['startDate'])
    })

    it('refuses an end before the start on create (400 on endDate) and accepts an end on the start day', async () => {
      const owner = await createUser(ctx)
      expectError(await add(owner, url, { ...kind.valid, startDate: '2024-05-10', endDate: '2024-05-09' }), 400, 'VALIDATION_ERROR', ['endDate'])
      const sameDay = await addOk(owner, url, { ...kind.valid, startDate: '2024-05-10', endDate: '2024-05-10' })
      expect(sameDay).toMatchObject({ startDate: '2024-05-10', endDate: '2024-05-10' })
    })

    it.each(['PUT', 'PATCH'] as const)('%s checks a partial change of either date against the stored other one (400 on endDate)', async (method) => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, { ...kind.valid, startDate: '2020-01-01', endDate: '2021-01-01' })
      const at = `${url}/${created.id}`
      expectError(await patch(owner, at, { endDate: '2019-12-31' }, method), 400, 'VALIDATION_ERROR', ['endDate'])
      expectError(await patch(owner, at, { startDate: '2021-01-02' }, method), 400, 'VALIDATION_ERROR', ['endDate'])
      expect(await rowIn(kind.table, created.id)).toMatchObject({ startDate: '2020-01-01', endDate: '2021-01-01' })
      // Both at once are judged together.
      const moved = await patch(owner, at, { startDate: '2022-03-01', endDate: '2022-04-01' }, method)
      expect(moved.statusCode).toBe(200)
      expect(moved.json().data).toMatchObject({ startDate: '2022-03-01', endDate: '2022-04-01' })
    })

    it('treats a null or missing end date as ongoing, and an ongoing record may start at any date', async () => {
      const owner = await createUser(ctx)
      const { endDate: _endDate, ...withoutEnd } = kind.valid
      expect(await addOk(owner, url, withoutEnd)).toMatchObject({ endDate: null })
      const created = await addOk(owner, url, { ...kind.valid, endDate: null })
      expect(created.endDate).toBeNull()
      const moved = await patch(owner, `${url}/${created.id}`, { startDate: '2030-01-01' })
      expect(moved.statusCode).toBe(200)
      // Ending it, then making it current again.
      expect((await patch(owner, `${url}/${created.id}`, { endDate: '2030-06-30' }, 'PUT')).json().data.endDate).toBe('2030-06-30')
      expect((await patch(owner, `${url}/${created.id}`, { endDate: null })).json().data.endDate).toBeNull()
      expect(await rowIn(kind.table, created.id)).toMatchObject({ startDate: '2030-01-01', endDate: null })
    })

    it('lists newest start first; records starting the same day in the order they were added', async () => {
      const owner = await createUser(ctx)
      const old = await addOk(owner, url, { ...kind.valid, startDate: '2015-01-01', endDate: null })
      const recentA = await addOk(owner, url, { ...kind.valid, startDate: '2022-06-01', endDate: null })
      const middle = await addOk(owner, url, { ...kind.valid, startDate: '2018-01-01', endDate: '2030-01-01' })
      const recentB = await addOk(owner, url, { ...kind.valid, startDate: '2022-06-01', endDate: '2022-07-01' })
      expect((await list(owner, url)).map((record) => record.id)).toEqual([recentA.id, recentB.id, middle.id, old.id])
    })
  })

  describe('skill rules', () => {
    const url = '/users/me/skills'
    const valid = kinds[0]!.valid

    it('refuses a level outside beginner, intermediate, advanced, expert (400 on level)', async () => {
      const owner = await createUser(ctx)
      for (const level of ['guru', 'Expert', '', null, 3]) {
        expectError(await add(owner, url, { ...valid, level }), 400, 'VALIDATION_ERROR', ['level'])
      }
      for (const level of ['beginner', 'intermediate', 'advanced', 'expert']) await addOk(owner, url, { ...valid, level })
    })

    it('refuses years of experience below 0, above 70 or not a number (400 on yearsOfExperience)', async () => {
      const owner = await createUser(ctx)
      for (const yearsOfExperience of [-1, -0.5, 70.5, 71, '5', null]) {
        expectError(await add(owner, url, { ...valid, yearsOfExperience }), 400, 'VALIDATION_ERROR', ['yearsOfExperience'])
      }
      for (const yearsOfExperience of [0, 1.5, 70]) {
        expect(await addOk(owner, url, { ...valid, yearsOfExperience })).toMatchObject({ yearsOfExperience })
      }
    })

    it('refuses a name that is empty, blank or over 50 characters (400 on name)', async () => {
      const owner = await createUser(ctx)
      for (const name of ['', '   ', 'x'.repeat(51)]) {
        expectError(await add(owner, url, { ...valid, name }), 400, 'VALIDATION_ERROR', ['name'])
      }
      await addOk(owner, url, { ...valid, name: 'x'.repeat(50) })
      const created = await addOk(owner, url, valid)
      expectError(await patch(owner, `${url}/${created.id}`, { name: 'x'.repeat(51) }), 400, 'VALIDATION_ERROR', ['name'])
    })

    it('requires every field on create (400 naming each)', async () => {
      const owner = await createUser(ctx)
      expectError(await add(owner, url, {}), 400, 'VALIDATION_ERROR', ['level', 'name', 'yearsOfExperience'])
    })

    it('lists skills by name, ignoring case', async () => {
      const owner = await createUser(ctx)
      for (const name of ['rust', 'TypeScript', 'Go', 'docker', 'C++']) await addOk(owner, url, { ...valid, name })
      expect((await list(owner, url)).map((skill) => skill.name)).toEqual(['C++', 'docker', 'Go', 'rust', 'TypeScript'])
    })
  })

  describe('project rules', () => {
    const url = '/users/me/projects'
    const valid = kinds[1]!.valid

    it('fills in description, url, endDate and technologies when they are left out', async () => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, { title: 'Side project', startDate: '2024-02-29' })
      expect(created).toMatchObject({ title: 'Side project', description: '', url: null, startDate: '2024-02-29', endDate: null, technologies: [] })
    })

    it('refuses a url that is not http or https (400 on url)', async () => {
      const owner = await createUser(ctx)
      for (const projectUrl of ['javascript:alert(1)', 'not a url', 'ftp://example.com/file', 'data:text/html,<script>alert(1)</script>', 'https://', 'http:// example.com', '']) {
        expectError(await add(owner, url, { ...valid, url: projectUrl }), 400, 'VALIDATION_ERROR', ['url'])
      }
      expectError(await add(owner, url, { ...valid, url: `https://example.com/${'a'.repeat(481)}` }), 400, 'VALIDATION_ERROR', ['url'])
      const created = await addOk(owner, url, valid)
      expectError(await patch(owner, `${url}/${created.id}`, { url: 'javascript:alert(1)' }), 400, 'VALIDATION_ERROR', ['url'])
    })

    it('accepts http and https urls up to 500 characters, and null to clear it', async () => {
      const owner = await createUser(ctx)
      const longest = `https://example.com/${'a'.repeat(480)}`
      expect(longest).toHaveLength(500)
      for (const projectUrl of ['http://example.com', 'https://example.com/a?b=c#d', longest]) {
        expect(await addOk(owner, url, { ...valid, url: projectUrl })).toMatchObject({ url: projectUrl })
      }
      const created = await addOk(owner, url, valid)
      expect((await patch(owner, `${url}/${created.id}`, { url: null })).json().data.url).toBeNull()
    })

    it('refuses more than 20 technologies, a blank or over-long one, and repeats (400 on technologies)', async () => {
      const owner = await createUser(ctx)
      const many = Array.from({ length: 21 }, (_, index) => `tech${index}`)
      expectError(await add(owner, url, { ...valid, technologies: many }), 400, 'VALIDATION_ERROR', ['technologies'])
      expectError(await add(owner, url, { ...valid, technologies: ['Go', 'Go'] }), 400, 'VALIDATION_ERROR', ['technologies'])
      expectError(await add(owner, url, { ...valid, technologies: 'Go' }), 400, 'VALIDATION_ERROR', ['technologies'])
      expectError(await add(owner, url, { ...valid, technologies: ['Go', ''] }), 400, 'VALIDATION_ERROR', ['technologies.1'])
      expectError(await add(owner, url, { ...valid, technologies: ['x'.repeat(51)] }), 400, 'VALIDATION_ERROR', ['technologies.0'])
      const twenty = many.slice(0, 20)
      const created = await addOk(owner, url, { ...valid, technologies: twenty })
      expect(created.technologies).toEqual(twenty)
      expectError(await patch(owner, `${url}/${created.id}`, { technologies: many }), 400, 'VALIDATION_ERROR', ['technologies'])
      expect((await patch(owner, `${url}/${created.id}`, { technologies: [] }, 'PUT')).json().data.technologies).toEqual([])
    })

    it('limits title to 1 to 100 characters and description to 2000 (400 naming each)', async () => {
      const owner = await createUser(ctx)
      expectError(await add(owner, url, { ...valid, title: '' }), 400, 'VALIDATION_ERROR', ['title'])
      expectError(await add(owner, url, { ...valid, title: 'x'.repeat(101), description: 'x'.repeat(2001) }), 400, 'VALIDATION_ERROR', ['description', 'title'])
      await addOk(owner, url, { ...valid, title: 'x'.repeat(100), description: 'x'.repeat(2000) })
    })
  })

  describe('experience rules', () => {
    const url = '/users/me/experiences'
    const valid = kinds[2]!.valid

    it('limits company and position to 1 to 100 characters, location to 100 and description to 2000 (400 naming each)', async () => {
      const owner = await createUser(ctx)
      expectError(await add(owner, url, { ...valid, company: '', position: 'x'.repeat(101) }), 400, 'VALIDATION_ERROR', ['company', 'position'])
      expectError(await add(owner, url, { ...valid, location: 'x'.repeat(101), description: 'x'.repeat(2001) }), 400, 'VALIDATION_ERROR', ['description', 'location'])
      await addOk(owner, url, { ...valid, company: 'x'.repeat(100), position: 'x'.repeat(100), location: 'x'.repeat(100), description: 'x'.repeat(2000) })
    })

    it('fills in description and location when left out, and a current position has no end date', async () => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, { company: 'Acme', position: 'CTO', startDate: '2023-01-01' })
      expect(created).toMatchObject({ description: '', location: '', endDate: null })
    })
  })

  describe('education rules', () => {
    const url = '/users/me/education'
    const valid = kinds[3]!.valid

    it('limits institution to 150, degree and field of study to 100, grade to 20 and description to 2000 (400 naming each)', async () => {
      const owner = await createUser(ctx)
      expectError(await add(owner, url, { ...valid, institution: 'x'.repeat(151), degree: '', fieldOfStudy: 'x'.repeat(101) }), 400, 'VALIDATION_ERROR', [
        'degree',
        'fieldOfStudy',
        'institution',
      ])
      expectError(await add(owner, url, { ...valid, grade: 'x'.repeat(21), description: 'x'.repeat(2001) }), 400, 'VALIDATION_ERROR', ['description', 'grade'])
      await addOk(owner, url, { ...valid, institution: 'x'.repeat(150), degree: 'x'.repeat(100), fieldOfStudy: 'x'.repeat(100), grade: 'x'.repeat(20) })
    })

    it('fills in grade, endDate and description when left out; null clears the grade', async () => {
      const owner = await createUser(ctx)
      const created = await addOk(owner, url, { institution: 'MIT', degree: 'PhD', fieldOfStudy: 'EECS', startDate: '2024-09-01' })
      expect(created).toMatchObject({ grade: null, endDate: null, description: '' })
      const graded = await patch(owner, `${url}/${created.id}`, { grade: 'A' })
      expect(graded.json().data.grade).toBe('A')
      expect((await patch(owner, `${url}/${created.id}`, { grade: null }, 'PUT')).json().data.grade).toBeNull()
    })
  })

  it('never lets two concurrent adds pass the limit', async () => {
    const owner = await createUser(ctx)
    const now = ctx.clock.now()
    const seed = kinds[0]!.seed
    const rows = Array.from({ length: PORTFOLIO_LIMIT - 1 }, (_, index) => ({ ...seed(index), id: newId(), userId: owner.user.id, createdAt: now, updatedAt: now }))
    await ctx.database.db.insert(skills).values(rows as never)
    const answers = await Promise.all(Array.from({ length: 4 }, () => add(owner, '/users/me/skills', kinds[0]!.valid)))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 422, 422, 422])
    expect(await list(owner, '/users/me/skills')).toHaveLength(PORTFOLIO_LIMIT)
  })
})
