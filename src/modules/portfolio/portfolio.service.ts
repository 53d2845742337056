import type { Db, Executor } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { fieldError, notFound } from '../../lib/errors.ts'
import type { Actor } from '../../access/access.ts'
import { portfolioLimitReached } from './portfolio.errors.ts'
import { createPortfolioRepository, type OwnedRecords, type PortfolioRepository } from './portfolio.repository.ts'

/** Records of one kind a user may hold; keeps a public profile (and its one response) bounded. */
export const PORTFOLIO_LIMIT = 100

/** Portfolio rows hold no private column, so the response is the row with ISO timestamps. */
const toRecord = <R extends { createdAt: Date; updatedAt: Date }>(row: R): Omit<R, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string } => ({
  ...row,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

/** Dated records (projects, experience, education; decision 0009): the end, when there is one, is not before the start. Other records pass. */
function assertPeriod(record: object): void {
  const { startDate, endDate } = record as { startDate?: string; endDate?: string | null }
  // Both are YYYY-MM-DD, so text order is date order.
  if (startDate && endDate && endDate < startDate) throw fieldError('endDate', 'must not be before startDate')
}

export function createPortfolioService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps

  /** The four use cases of one kind of record; every one is scoped to the caller's own records. */
  function ownRecords<Row extends { createdAt: Date; updatedAt: Date }, Fields extends object>(
    pick: (repository: PortfolioRepository) => OwnedRecords<Row, Fields>,
    noun: string,
    plural: string,
  ) {
    const recordsIn = (executor: Executor) => pick(createPortfolioRepository(executor))

    return {
      list: async (actor: Actor) => (await recordsIn(db).listByUser(actor.id)).map(toRecord),

      add: (actor: Actor, fields: Fields) =>
        db.transaction(async (tx) => {
          assertPeriod(fields)
          const records = recordsIn(tx)
          await records.lockOwner(actor.id)
          if ((await records.countByUser(actor.id)) >= PORTFOLIO_LIMIT) throw portfolioLimitReached(plural, PORTFOLIO_LIMIT)
          const now = clock.now()
          const row = await records.insert({ ...fields, id: newId(), userId: actor.id, createdAt: now, updatedAt: now })
          return toRecord(row)
        }),

      update: (actor: Actor, id: string, changes: Partial<Fields>) =>
        db.transaction(async (tx) => {
          const records = recordsIn(tx)
          // Another user's record is "not found": existence must not leak.
          const current = await records.lockOwned(id, actor.id)
          if (!current) throw notFound(noun)
          assertPeriod({ ...current, ...changes })
          const row = await records.update(id, actor.id, { ...changes, updatedAt: clock.now() })
          return toRecord(row!)
        }),

      remove: async (actor: Actor, id: string): Promise<void> => {
        if (!(await recordsIn(db).delete(id, actor.id))) throw notFound(noun)
      },
    }
  }

  const skills = ownRecords((repository) => repository.skills, 'Skill', 'skills')
  const projects = ownRecords((repository) => repository.projects, 'Project', 'projects')
  const experiences = ownRecords((repository) => repository.experiences, 'Experience', 'experiences')
  const education = ownRecords((repository) => repository.education, 'Education', 'education records')

  return {
    listSkills: skills.list,
    addSkill: skills.add,
    updateSkill: skills.update,
    removeSkill: skills.remove,

    listProjects: projects.list,
    addProject: projects.add,
    updateProject: projects.update,
    removeProject: projects.remove,

    listExperiences: experiences.list,
    addExperience: experiences.add,
    updateExperience: experiences.update,
    removeExperience: experiences.remove,

    listEducation: education.list,
    addEducation: education.add,
    updateEducation: education.update,
    removeEducation: education.remove,

    /** Everything a public profile shows (`GET /users/{userId}`): one query per kind. */
    async portfolioOf(executor: Executor, userId: string) {
      const repository = createPortfolioRepository(executor)
      const [skillRows, projectRows, experienceRows, educationRows] = await Promise.all([
        repository.skills.listByUser(userId),
        repository.projects.listByUser(userId),
        repository.experiences.listByUser(userId),
        repository.education.listByUser(userId),
      ])
      return {
        skills: skillRows.map(toRecord),
        projects: projectRows.map(toRecord),
        experiences: experienceRows.map(toRecord),
        education: educationRows.map(toRecord),
      }
    },
  }
}

export type PortfolioService = ReturnType<typeof createPortfolioService>
export type Portfolio = Awaited<ReturnType<PortfolioService['portfolioOf']>>
