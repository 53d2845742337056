import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestContext } from '../../../test/setup/test-app.ts'
import { createUser } from '../../../test/factories/users.ts'
import type { Actor } from '../../access/access.ts'
import { users } from '../users/users.table.ts'
import type { PortfolioService } from './portfolio.service.ts'
import { skills } from './portfolio.table.ts'

describe('portfolio service', () => {
  let ctx: TestContext
  let portfolio: PortfolioService
  beforeAll(async () => {
    ctx = await createTestApp()
    portfolio = ctx.app.container.portfolio
  })
  afterAll(() => ctx.close())

  const actorFor = async (): Promise<Actor> => {
    const { user } = await createUser(ctx)
    return { id: user.id, email: user.email, fullName: user.fullName, isStaff: false, isSuperuser: false, permissions: new Set() }
  }

  describe('portfolioOf', () => {
    it('returns empty lists for a user without records', async () => {
      const actor = await actorFor()
      expect(await portfolio.portfolioOf(ctx.database.db, actor.id)).toEqual({ skills: [], projects: [], experiences: [], education: [] })
    })

    it("returns all four kinds of the user's records, each in its list order, and nobody else's", async () => {
      const actor = await actorFor()
      const other = await actorFor()
      const rust = await portfolio.addSkill(actor, { name: 'Rust', level: 'intermediate', yearsOfExperience: 2 })
      const go = await portfolio.addSkill(actor, { name: 'go', level: 'expert', yearsOfExperience: 8 })
      const oldProject = await portfolio.addProject(actor, { title: 'Old', startDate: '2018-01-01', endDate: '2018-12-31' })
      const newProject = await portfolio.addProject(actor, { title: 'New', startDate: '2024-01-01', technologies: ['Zig'] })
      const job = await portfolio.addExperience(actor, { company: 'Acme', position: 'Engineer', startDate: '2020-05-01' })
      const degree = await portfolio.addEducation(actor, { institution: 'ETH', degree: 'MSc', fieldOfStudy: 'CS', startDate: '2016-09-01', endDate: '2018-08-31' })
      await portfolio.addSkill(other, { name: 'Elixir', level: 'beginner', yearsOfExperience: 0 })
      await portfolio.addProject(other, { title: 'Theirs', startDate: '2024-01-01' })

      const result = await portfolio.portfolioOf(ctx.database.db, actor.id)
      expect(result).toEqual({ skills: [go, rust], projects: [newProject, oldProject], experiences: [job], education: [degree] })
      expect(newProject).toMatchObject({ userId: actor.id, description: '', url: null, endDate: null, technologies: ['Zig'] })
      expect(degree).toMatchObject({ startDate: '2016-09-01', endDate: '2018-08-31', grade: null })
      expect(typeof rust.createdAt).toBe('string')
    })

    it('goes with its owner: deleting the account deletes the records', async () => {
      const actor = await actorFor()
      const skill = await portfolio.addSkill(actor, { name: 'SQL', level: 'advanced', yearsOfExperience: 10 })
      await ctx.database.db.delete(users).where(eq(users.id, actor.id))
      expect(await ctx.database.db.select().from(skills).where(eq(skills.id, skill.id))).toEqual([])
      expect(await portfolio.portfolioOf(ctx.database.db, actor.id)).toEqual({ skills: [], projects: [], experiences: [], education: [] })
    })
  })

  it("refuses to change or remove another user's record as if it did not exist (404 NOT_FOUND)", async () => {
    const owner = await actorFor()
    const intruder = await actorFor()
    const job = await portfolio.addExperience(owner, { company: 'Acme', position: 'Engineer', startDate: '2020-05-01' })
    await expect(portfolio.updateExperience(intruder, job.id, { position: 'CEO' })).rejects.toMatchObject({ statusCode: 404, code: 'NOT_FOUND' })
    await expect(portfolio.removeExperience(intruder, job.id)).rejects.toMatchObject({ statusCode: 404, code: 'NOT_FOUND' })
    expect(await portfolio.listExperiences(owner)).toEqual([job])
  })

  it('checks the period of a partial update against the stored dates (400 on endDate)', async () => {
    const actor = await actorFor()
    const course = await portfolio.addEducation(actor, { institution: 'ETH', degree: 'BSc', fieldOfStudy: 'CS', startDate: '2012-09-01', endDate: '2015-08-31' })
    await expect(portfolio.updateEducation(actor, course.id, { startDate: '2016-01-01' })).rejects.toMatchObject({
      statusCode: 400,
      code: 'VALIDATION_ERROR',
      details: [{ field: 'endDate', message: 'must not be before startDate' }],
    })
  })
})
