import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, Message, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireSuperuser } from '../../http/auth-hooks.ts'
import type { EnvelopeShape } from '../../http/envelope.ts'
import { answerTagged } from '../../http/tagged-answer.ts'
import type { CatalogueService } from './catalogue.service.ts'
import { Category, CategoryParams, CategoryTreeItem, CreateCategoryBody, NotModified, UpdateCategoryBody } from './categories.schemas.ts'

const tags = ['categories']
const security = [{ bearerAuth: [] }]

const KEPT = ' Served from memory: a change shows within seconds on every instance. Answered with a strong `ETag`; `If-None-Match` with it gets `304 Not Modified`.'

export const categoriesRoutes: FastifyPluginAsyncTypebox<{ categories: CatalogueService; envelope: EnvelopeShape }> = async (app, { categories, envelope }) => {
  app.get(
    '/categories',
    {
      schema: {
        tags,
        summary: 'The category tree',
        description: `Top-level categories with their subcategories, each level ordered by position then name.${KEPT}`,
        response: responses({ 200: Envelope(Type.Array(CategoryTreeItem)), 304: NotModified }, 429),
      },
    },
    async (request, reply) => answerTagged(request, reply, await categories.listCategoryTree(), envelope),
  )

  app.get(
    '/categories/:categoryId',
    {
      schema: {
        tags,
        summary: 'One category by id or slug',
        description: `With its subcategories, and its parent when it is a subcategory.${KEPT}`,
        params: CategoryParams,
        response: responses({ 200: Envelope(Category), 304: NotModified }, 404),
      },
    },
    async (request, reply) => answerTagged(request, reply, await categories.getCategory(request.params.categoryId), envelope),
  )

  app.post(
    '/categories',
    {
      preValidation: requireSuperuser,
      schema: {
        tags,
        security,
        summary: 'Create a category or subcategory (superuser)',
        body: CreateCategoryBody,
        response: responses({ 201: Envelope(Category) }, 400, 401, 403),
      },
    },
    async (request, reply) => reply.status(201).send(ok(await categories.createCategory(actorOf(request), request.body))),
  )

  app.put(
    '/categories/:categoryId',
    {
      preValidation: requireSuperuser,
      schema: {
        tags,
        security,
        summary: 'Change a category (superuser)',
        description: 'Partial: only the fields sent change. A category with subcategories cannot become a subcategory.',
        params: CategoryParams,
        body: UpdateCategoryBody,
        response: responses({ 200: Envelope(Category) }, 400, 401, 403, 404),
      },
    },
    async (request) => ok(await categories.updateCategory(actorOf(request), request.params.categoryId, request.body)),
  )

  app.delete(
    '/categories/:categoryId',
    {
      preValidation: requireSuperuser,
      schema: {
        tags,
        security,
        summary: 'Delete a category (superuser)',
        description: 'Refused with 422 `CATEGORY_IN_USE` while it has subcategories or any service (of any status, deleted ones included) uses it.',
        params: CategoryParams,
        response: responses({ 200: Envelope(Message) }, 401, 403, 404, 422),
      },
    },
    async (request) => {
      await categories.deleteCategory(actorOf(request), request.params.categoryId)
      return ok({ message: 'Category deleted' })
    },
  )
}
