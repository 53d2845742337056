import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Envelope, IdParams, Message, ok, responses } from '../../http/common.schemas.ts'
import { actorOf, requireAuth } from '../../http/auth-hooks.ts'
import { answer } from '../../http/json-text.ts'
import { withForm } from '../../http/multipart.ts'
import { catalogueErrors } from './catalogue.errors.ts'
import type { CatalogueService } from './catalogue.service.ts'
import { GALLERY_LIMIT } from './service-rules.ts'
import {
  BannerForm,
  CategoryRefParams,
  CategoryServicesQuery,
  GalleryForm,
  ListServicesQuery,
  ReorderImagesBody,
  SavedServicesPage,
  SavedServicesQuery,
  Service,
  ServiceBody,
  ServiceImageParams,
  ServicePage,
} from './services.schemas.ts'

const tags = ['services']
const security = [{ bearerAuth: [] }]
const ServiceParams = IdParams('serviceId')
const OWNER_ONLY = "Only the service's owner: anyone else's id answers 404, as an unknown one does."
const VISIBILITY = 'An active service is public; a pending, rejected or paused one is shown only to its owner and to staff with view_services (404 to others).'

type App = Parameters<FastifyPluginAsyncTypebox>[0]

/** `/services`: the public catalogue, a seller's offers (create, edit, delete, pause, resume) and their galleries. */
export const servicesRoutes: FastifyPluginAsyncTypebox<{ services: CatalogueService; tmpDir: string }> = async (app, { services, tmpDir }) => {
  browsingRoutes(app, services)
  savedRoutes(app, services)
  offerRoutes(app, services)
  galleryRoutes(app, services, tmpDir)
}

function browsingRoutes(app: App, services: CatalogueService) {
  app.get(
    '/services',
    {
      schema: {
        tags,
        summary: 'Browse and search active services',
        description:
          '`search` ranks by full text (title first) and forgives typos; any text is accepted. `relevance` sorting needs `search`; it ranks the first 1,000 matches the index yields. Filters combine (all must hold). `facets=true` adds counts per category, price band, delivery band and seller level beside the page, each without its own filter. Follow `nextCursor` for deep pages.',
        querystring: ListServicesQuery,
        response: responses({ 200: Envelope(ServicePage) }, 400),
      },
    },
    async (request, reply) => answer(reply, await services.listServices(request.query)),
  )

  app.get(
    '/categories/:categoryId/services',
    {
      schema: {
        tags: ['categories'],
        summary: 'Active services of a category and its subcategories',
        description: 'The category by id or slug; the same filters, sorts and facets as `GET /services`.',
        params: CategoryRefParams,
        querystring: CategoryServicesQuery,
        response: responses({ 200: Envelope(ServicePage) }, 400, 404),
      },
    },
    async (request, reply) => answer(reply, await services.listCategoryServices(request.params.categoryId, request.query)),
  )

  app.get(
    '/services/:serviceId',
    { schema: { tags, summary: 'One service', description: VISIBILITY, params: ServiceParams, response: responses({ 200: Envelope(Service) }, 404) } },
    async (request, reply) => answer(reply, await services.getService(request.session?.actor ?? null, request.params.serviceId)),
  )
}

const NoContent = (description: string) => Type.Null({ description })

function savedRoutes(app: App, services: CatalogueService) {
  app.put(
    '/services/:serviceId/saved',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Save a service',
        description: `Adds the service to your saved list (\`GET /users/me/saved\`); saving it again changes nothing. ${VISIBILITY}`,
        params: ServiceParams,
        response: responses({ 204: NoContent('Saved (or already saved).') }, 401, 404),
      },
    },
    async (request, reply) => {
      await services.saveService(actorOf(request), request.params.serviceId)
      return reply.status(204).send(null)
    },
  )

  app.delete(
    '/services/:serviceId/saved',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Remove a saved service',
        description: 'Takes the service off your saved list; removing one that is not there changes nothing. A service you saved can always be removed, even once it is paused or deleted; any other service you may not see answers 404.',
        params: ServiceParams,
        response: responses({ 204: NoContent('Not in your saved list (any more).') }, 401, 404),
      },
    },
    async (request, reply) => {
      await services.unsaveService(actorOf(request), request.params.serviceId)
      return reply.status(204).send(null)
    },
  )

  app.get(
    '/users/me/saved',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Your saved services',
        description: 'Newest saved first, each as lists show it. A saved service that is paused, deleted or otherwise not active is left out while it is so.',
        querystring: SavedServicesQuery,
        response: responses({ 200: Envelope(SavedServicesPage) }, 400, 401),
      },
    },
    async (request) => ok(await services.listSavedServices(actorOf(request), request.query)),
  )
}

function offerRoutes(app: App, services: CatalogueService) {
  app.post(
    '/services',
    {
      preValidation: requireAuth,
      schema: { tags, security, summary: 'Publish a service', description: 'The service starts `pending` until staff approve it.', body: ServiceBody, response: responses({ 201: Envelope(Service) }, 400, 401) },
    },
    async (request, reply) => reply.status(201).send(ok(await services.createService(actorOf(request), request.body))),
  )

  app.put(
    '/services/:serviceId',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Edit a service',
        description: `Replaces every field and resubmits the service for review (\`pending\`). ${OWNER_ONLY}`,
        params: ServiceParams,
        body: ServiceBody,
        response: responses({ 200: Envelope(Service) }, 400, 401, 404),
      },
    },
    async (request) => ok(await services.updateService(actorOf(request), request.params.serviceId, request.body)),
  )

  app.delete(
    '/services/:serviceId',
    {
      preValidation: requireAuth,
      schema: { tags, security, summary: 'Delete a service', description: `A soft delete: the service disappears everywhere; refused while it has open orders. ${OWNER_ONLY}`, params: ServiceParams, response: responses({ 200: Envelope(Message) }, 401, 404, catalogueErrors.SERVICE_HAS_OPEN_ORDERS) },
    },
    async (request) => {
      await services.deleteService(actorOf(request), request.params.serviceId)
      return ok({ message: 'Service deleted' })
    },
  )

  for (const [action, use] of [
    ['pause', services.pauseService],
    ['resume', services.resumeService],
  ] as const) {
    app.post(
      `/services/:serviceId/${action}`,
      {
        preValidation: requireAuth,
        schema: {
          tags,
          security,
          summary: action === 'pause' ? 'Pause an active service' : 'Resume a paused service',
          description: `Only active <-> paused (422 \`INVALID_TRANSITION\` otherwise). ${OWNER_ONLY}`,
          params: ServiceParams,
          response: responses({ 200: Envelope(Service) }, 401, 404, 422),
        },
      },
      async (request) => ok(await use(actorOf(request), request.params.serviceId)),
    )
  }
}

function galleryRoutes(app: App, services: CatalogueService, tmpDir: string) {
  app.post(
    '/services/:serviceId/images',
    {
      preValidation: requireAuth,
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security,
        summary: 'Add gallery images',
        description: `multipart/form-data with up to ${GALLERY_LIMIT} \`files\` (JPEG, PNG, WebP or GIF, 10 MB each), appended to the gallery; a gallery holds at most ${GALLERY_LIMIT}. ${OWNER_ONLY}`,
        ...GalleryForm.schema,
        params: ServiceParams,
        response: responses({ 200: Envelope(Service) }, 400, 401, 404, 415),
      },
    },
    async (request) =>
      ok(
        await withForm(request, GalleryForm, tmpDir, ({ files }) => services.addImages(actorOf(request), request.params.serviceId, files)),
      ),
  )

  app.delete(
    '/services/:serviceId/images/:uploadId',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Remove a gallery image',
        description: `The image and its stored file are deleted; an id that is not an image of this service is 404. ${OWNER_ONLY}`,
        params: ServiceImageParams,
        response: responses({ 200: Envelope(Service) }, 401, 404),
      },
    },
    async (request) => ok(await services.removeImage(actorOf(request), request.params.serviceId, request.params.uploadId)),
  )

  app.put(
    '/services/:serviceId/images/order',
    {
      preValidation: requireAuth,
      schema: {
        tags,
        security,
        summary: 'Reorder the gallery',
        description: `\`imageIds\` lists every current gallery image once, in the new order (400 on \`imageIds\` otherwise). ${OWNER_ONLY}`,
        params: ServiceParams,
        body: ReorderImagesBody,
        response: responses({ 200: Envelope(Service) }, 400, 401, 404),
      },
    },
    async (request) => ok(await services.reorderImages(actorOf(request), request.params.serviceId, request.body.imageIds)),
  )

  app.post(
    '/services/:serviceId/banner',
    {
      preValidation: requireAuth,
      config: { rateLimitBucket: 'uploads' },
      schema: {
        tags,
        security,
        summary: 'Set the banner',
        description: `multipart/form-data with one \`file\` (JPEG, PNG, WebP or GIF, 10 MB); replaces the previous banner. ${OWNER_ONLY}`,
        ...BannerForm.schema,
        params: ServiceParams,
        response: responses({ 200: Envelope(Service) }, 400, 401, 404, 415),
      },
    },
    async (request) =>
      ok(
        await withForm(request, BannerForm, tmpDir, ({ files }) => services.setBanner(actorOf(request), request.params.serviceId, files[0]!)),
      ),
  )
}
