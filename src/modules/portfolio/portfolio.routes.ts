import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { Envelope, IdParams, Message, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import type { Actor } from '../../access/access.ts'
import { PORTFOLIO_LIMIT, type PortfolioService } from './portfolio.service.ts'
import {
  CreateEducationBody,
  CreateExperienceBody,
  CreateProjectBody,
  CreateSkillBody,
  Education,
  Experience,
  Project,
  Skill,
  UpdateEducationBody,
  UpdateExperienceBody,
  UpdateProjectBody,
  UpdateSkillBody,
} from './portfolio.schemas.ts'

const tags = ['portfolio']
const security = [{ bearerAuth: [] }]
const RecordParams = IdParams('id')
const OWNER_ONLY = "Only the caller's own records: another user's id answers 404, as an unknown one does."

/** One kind of portfolio record: its address, its schemas and the service use cases behind them. */
interface Collection<I extends TSchema, C extends TSchema, U extends TSchema> {
  url: string
  noun: string
  plural: string
  order: string
  Item: I
  CreateBody: C
  UpdateBody: U
  list(actor: Actor): Promise<Static<I>[]>
  add(actor: Actor, body: Static<C>): Promise<Static<I>>
  update(actor: Actor, id: string, changes: Static<U>): Promise<Static<I>>
  remove(actor: Actor, id: string): Promise<void>
}

type RecordParams = Static<typeof RecordParams>

/**
 * GET and POST on the collection; PUT, PATCH (the same partial update) and DELETE on one record.
 * The request and reply types come from `Collection`, which ties each schema to its use case: the
 * type provider cannot resolve them for generic schemas, so `app` is an untyped instance here.
 */
function collectionRoutes<I extends TSchema, C extends TSchema, U extends TSchema>(app: FastifyInstance, records: Collection<I, C, U>): void {
  const { url, noun, plural } = records
  const capitalised = noun.charAt(0).toUpperCase() + noun.slice(1)

  app.get(
    url,
    {
      preValidation: requireAuth,
      schema: { tags, security, summary: `Your ${plural}`, description: records.order, response: responses({ 200: Envelope(Type.Array(records.Item)) }, 401) },
    },
    async (request) => ok(await records.list(actorOf(request))),
  )

  app.post(
    url,
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: `Add a ${noun}`,
        description: `Each user holds at most ${PORTFOLIO_LIMIT} ${plural} (422 \`PORTFOLIO_LIMIT_REACHED\`).`,
        body: records.CreateBody,
        response: responses({ 201: Envelope(records.Item) }, 400, 401, 422),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await records.add(actorOf(request), request.body as Static<C>))),
  )

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `${url}/:id`,
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: `Change one of your ${plural}`,
        description: `PUT and PATCH are the same partial update. ${OWNER_ONLY}`,
        params: RecordParams,
        body: records.UpdateBody,
        response: responses({ 200: Envelope(records.Item) }, 400, 401, 404),
      },
      handler: async (request) => ok(await records.update(actorOf(request), (request.params as RecordParams).id, request.body as Static<U>)),
    })
  }

  app.delete(
    `${url}/:id`,
    {
      preValidation: requireAuth,
      schema: { tags, security, summary: `Remove one of your ${plural}`, description: OWNER_ONLY, params: RecordParams, response: responses({ 200: Envelope(Message) }, 401, 404) },
    },
    async (request) => {
      await records.remove(actorOf(request), (request.params as RecordParams).id)
      return ok({ message: `${capitalised} deleted` })
    },
  )
}

const BY_START = 'Newest start date first; records starting the same day in the order they were added.'

export const portfolioRoutes: FastifyPluginAsyncTypebox<{ portfolio: PortfolioService }> = async (app, { portfolio }) => {
  collectionRoutes(app, {
    url: '/users/me/skills',
    noun: 'skill',
    plural: 'skills',
    order: 'Ordered by name.',
    Item: Skill,
    CreateBody: CreateSkillBody,
    UpdateBody: UpdateSkillBody,
    list: portfolio.listSkills,
    add: portfolio.addSkill,
    update: portfolio.updateSkill,
    remove: portfolio.removeSkill,
  })

  collectionRoutes(app, {
    url: '/users/me/projects',
    noun: 'project',
    plural: 'projects',
    order: BY_START,
    Item: Project,
    CreateBody: CreateProjectBody,
    UpdateBody: UpdateProjectBody,
    list: portfolio.listProjects,
    add: portfolio.addProject,
    update: portfolio.updateProject,
    remove: portfolio.removeProject,
  })

  collectionRoutes(app, {
    url: '/users/me/experiences',
    noun: 'experience',
    plural: 'experiences',
    order: BY_START,
    Item: Experience,
    CreateBody: CreateExperienceBody,
    UpdateBody: UpdateExperienceBody,
    list: portfolio.listExperiences,
    add: portfolio.addExperience,
    update: portfolio.updateExperience,
    remove: portfolio.removeExperience,
  })

  collectionRoutes(app, {
    url: '/users/me/education',
    noun: 'education record',
    plural: 'education records',
    order: BY_START,
    Item: Education,
    CreateBody: CreateEducationBody,
    UpdateBody: UpdateEducationBody,
    list: portfolio.listEducation,
    add: portfolio.addEducation,
    update: portfolio.updateEducation,
    remove: portfolio.removeEducation,
  })
}
