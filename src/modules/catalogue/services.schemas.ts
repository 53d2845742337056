import { Type, type Static } from '@sinclair/typebox'
import { Amount, Id, Nullable, Page, PageQuery, Pagination, StringEnum, Timestamp } from '../../http/common.schemas.ts'
import { defineForm } from '../../http/multipart.ts'
import { PublicFile, TAG_RULES } from '../uploads/uploads.module.ts'
import { SellerLevel, sellerLevels, UserSummary } from '../users/users.module.ts'
import { deliveryBands, priceBands } from './service-rules.ts'
import { GALLERY_LIMIT } from './service-rules.ts'
import { serviceStatuses } from './services.table.ts'

const Text = (min: number, max: number, description: string) =>
  Type.String({ minLength: min, maxLength: max, errorMessage: min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`, description })

const Price = (min: number, max: number) =>
  Amount({ minimum: min, maximum: max, errorMessage: `must be a number from ${min.toFixed(2)} to ${max.toFixed(2)} with at most two decimals`, description: `From ${min.toFixed(2)} to ${max.toFixed(2)}, at most two decimals.` })

const Title = Type.String({
  minLength: 5,
  maxLength: 100,
  // Not blank, and no markup: a '<' followed by a letter, '/', '!' or '?' would open a tag or comment.
  pattern: '^(?=[\\s\\S]*\\S)(?![\\s\\S]*<[A-Za-z/!?])',
  errorMessage: 'must be 5 to 100 characters of plain text (no HTML)',
  description: '5 to 100 characters, plain text.',
})

const Tag = Type.String({
  minLength: 2,
  maxLength: 30,
  pattern: '^[a-z0-9][a-z0-9 -]*[a-z0-9]$',
  errorMessage: 'must be 2 to 30 lowercase letters, digits, spaces or hyphens',
})

const Revisions = Type.Union([Type.Integer({ minimum: 0, maximum: 20 }), Type.Literal('unlimited')], {
  errorMessage: "must be an integer from 0 to 20 or 'unlimited'",
  description: "How many revisions the buyer may ask for: 0 to 20, or `'unlimited'`.",
})

const PackageBody = Type.Object(
  {
    name: Text(1, 50, 'e.g. `Basic`.'),
    description: Type.Optional(Text(0, 500, 'What the package includes.')),
    price: Price(5, 50_000),
    deliveryDays: Type.Integer({ minimum: 1, maximum: 90, errorMessage: 'must be an integer from 1 to 90', description: 'Days to deliver.' }),
    revisions: Revisions,
    features: Type.Optional(Type.Array(Text(1, 100, 'One feature.'), { maxItems: 10, description: 'At most 10.' })),
  },
  { additionalProperties: false },
)
export type PackageBody = Static<typeof PackageBody>

const ExtraBody = Type.Object(
  {
    title: Text(2, 80, 'e.g. `Source files`.'),
    price: Price(5, 5_000),
    additionalDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 30, errorMessage: 'must be an integer from 0 to 30', description: 'Days the extra adds to delivery.' })),
  },
  { additionalProperties: false },
)
export type ExtraBody = Static<typeof ExtraBody>

export const ServiceBody = Type.Object(
  {
    title: Title,
    shortDescription: Type.Optional(Text(0, 200, 'One line shown in lists.')),
    description: Text(20, 5000, 'The full description.'),
    categoryId: Type.String({ format: 'uuid', errorMessage: 'must be the id of a category', description: 'A category or subcategory id.' }),
    // No errorMessage on arrays: it would swallow their items' errors, which keep their own path.
    tags: Type.Optional(Type.Array(Tag, { maxItems: 10, uniqueItems: true, description: 'At most 10, each once.' })),
    packages: Type.Array(PackageBody, { minItems: 1, maxItems: 3, description: 'One to three packages; the cheapest sets the starting price.' }),
    extras: Type.Optional(Type.Array(ExtraBody, { maxItems: 5, description: 'At most 5 optional add-ons.' })),
    bannerId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be an upload id', description: 'An unattached upload of yours to become the banner.' })),
    imageIds: Type.Optional(
      Type.Array(Type.String({ format: 'uuid', errorMessage: 'must be an upload id' }), {
        maxItems: 10,
        uniqueItems: true,
        description: 'Unattached uploads of yours added to the gallery, in this order; a gallery holds at most 10 images.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'Creating or editing a service (re)submits it for review: its status becomes `pending`. PUT replaces every field, packages and extras included.',
    examples: [
      {
        title: 'I will design a minimalist logo for your small business',
        shortDescription: 'Hand-crafted logo concepts with vector files and a mini brand guide.',
        description:
          'I am a brand designer with ten years of experience with cafés, bakeries and independent shops. You fill in a short questionnaire, I sketch ideas, and you get polished concepts to choose from. Every package includes transparent PNG and high-resolution JPG files; Standard and Premium add vector files and a one-page brand guide.',
        categoryId: '01959e59-18b8-7425-aba0-3277c393a99c',
        tags: ['logo design', 'minimalist', 'branding'],
        packages: [
          { name: 'Basic', description: 'One logo concept, PNG and JPG files.', price: 45, deliveryDays: 3, revisions: 2, features: ['1 concept', 'Transparent PNG', 'High-resolution JPG'] },
          { name: 'Standard', description: 'Three concepts with vector files.', price: 120, deliveryDays: 5, revisions: 5, features: ['3 concepts', 'Vector files (AI, SVG, PDF)', 'Social media kit'] },
          { name: 'Premium', description: 'Full logo suite and a one-page brand guide.', price: 260, deliveryDays: 7, revisions: 'unlimited', features: ['5 concepts', 'Vector files (AI, SVG, PDF)', 'Colour palette and fonts', 'One-page brand guide'] },
        ],
        extras: [
          { title: 'Source files (AI, EPS)', price: 25, additionalDays: 1 },
          { title: 'Express delivery in 24 hours', price: 40, additionalDays: 0 },
        ],
        bannerId: '0195abd0-32a0-74da-803b-0112d19facce',
        imageIds: ['0195b922-787a-7b13-a9ab-c278c945705f', '0195ca1b-ecaf-7803-a1d0-a488cae2d33f'],
      },
    ],
  },
)
export type ServiceBody = Static<typeof ServiceBody>

const ServiceStatus = Type.Union(
  serviceStatuses.map((value) => Type.Literal(value)),
  { errorMessage: `must be one of ${serviceStatuses.join(', ')}` },
)

const CategoryRef = Type.Object({ id: Id, name: Type.String(), slug: Type.String() })
const Rating = Type.Object({ average: Type.Number(), count: Type.Integer() })

export const Service = Type.Object(
  {
    id: Id,
    title: Type.String(),
    shortDescription: Type.String(),
    description: Type.String(),
    tags: Type.Array(Type.String()),
    status: ServiceStatus,
    rejectionReason: Nullable(Type.String({ description: 'Shown to the owner and to staff with view_services only.' })),
    category: CategoryRef,
    seller: UserSummary,
    sellerLevel: SellerLevel,
    packages: Type.Array(
      Type.Object({
        id: Id,
        name: Type.String(),
        description: Type.String(),
        price: Type.Number(),
        deliveryDays: Type.Integer(),
        revisions: Type.Union([Type.Integer(), Type.Literal('unlimited')]),
        features: Type.Array(Type.String()),
      }),
    ),
    extras: Type.Array(Type.Object({ id: Id, title: Type.String(), price: Type.Number(), additionalDays: Type.Integer() })),
    banner: Nullable(Type.String({ description: 'URL of the banner image.' })),
    images: Type.Array(PublicFile),
    startingPrice: Type.Number({ description: 'The cheapest package.' }),
    rating: Rating,
    ordersCount: Type.Integer(),
    savedCount: Type.Integer({ description: 'How many people keep the service in their saved list.' }),
    saved: Type.Boolean({ description: 'Whether the caller keeps it in their saved list (`PUT /services/{id}/saved`); always false without a token.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { description: 'A service ("gig").' },
)

export const ServiceSummary = Type.Object(
  {
    id: Id,
    title: Type.String(),
    shortDescription: Type.String(),
    startingPrice: Type.Number(),
    rating: Rating,
    ordersCount: Type.Integer(),
    banner: Nullable(Type.String()),
    seller: UserSummary,
    sellerLevel: SellerLevel,
    category: CategoryRef,
    createdAt: Timestamp,
  },
  { description: 'A service as lists show it.' },
)

/** A live service as an order sees it (`offerSql`), lent to the orders module's placement. */
export const Offer = Type.Object({ id: Id, status: ServiceStatus, sellerId: Id, title: Type.String() })
export type Offer = Static<typeof Offer>

/** An extra as an order records it, priced when it is placed (`pricedChoiceSql`): cents and days as the columns hold them. */
export const ChosenExtra = Type.Object({ id: Id, title: Type.String(), priceCents: Type.Integer(), additionalDays: Type.Integer() })
export type ChosenExtra = Static<typeof ChosenExtra>

const facetCount = Type.Integer({ description: 'Matching services (of the first 1,000 when `countsAreExact` is false).' })

/**
 * Counts beside a page (`facets=true`): each facet counts the services of the list's query and
 * filters without its own filter, so that it shows what choosing one of its keys would give.
 */
export const Facets = Type.Object(
  {
    categories: Type.Array(
      Type.Object({
        key: Type.String({ description: "The category's slug (use it as `category`)." }),
        parent: Nullable(Type.String({ description: "The top-level category's slug; null for a top-level category, whose count includes its subcategories'." })),
        count: facetCount,
      }),
      { description: 'Top-level categories and subcategories with at least one match, most matches first. Ignores `category`.' },
    ),
    priceBands: Type.Array(
      Type.Object({
        key: StringEnum(priceBands.map((band) => band.key)),
        from: Type.Number({ description: 'Lowest starting price in the band.' }),
        to: Nullable(Type.Number({ description: 'Highest starting price in the band; null for the last band.' })),
        count: facetCount,
      }),
      { description: 'Every band of starting price, in order, zeros included: use `from` and `to` as `minPrice` and `maxPrice`. Ignores `minPrice` and `maxPrice`.' },
    ),
    deliveryBands: Type.Array(
      Type.Object({
        key: StringEnum(deliveryBands.map((band) => band.key)),
        from: Type.Integer({ description: 'Fewest days of the cheapest package in the band.' }),
        to: Nullable(Type.Integer({ description: 'Most days in the band; null for the last band.' })),
        count: facetCount,
      }),
      { description: "Every band of the cheapest package's delivery days, in order, zeros included. Ignores `deliveryDays`." },
    ),
    sellerLevels: Type.Array(Type.Object({ key: SellerLevel, count: facetCount }), { description: 'Every seller level, from `new` to `top_rated`, zeros included. Ignores `sellerLevel`.' }),
    countsAreExact: Type.Boolean({
      description:
        'False when a facet counted only the first 1,000 matches of its query (in the list\'s order; a search\'s first 1,000 candidates), as `total` does: its counts then describe those 1,000.',
    }),
  },
  { description: 'Counts for the current query and filters, each facet without its own filter.' },
)

/** A page of services: the shared pagination, plus `totalIsExact` and `nextCursor`, and the facets when asked. */
export const ServicePage = Type.Object({
  items: Type.Array(ServiceSummary),
  pagination: Type.Composite([
    Pagination,
    Type.Object({
      totalIsExact: Type.Boolean({
        description:
          'False when `total` is a floor: searches and every filter but the category count at most 1,000 matches, so `total: 1000, totalIsExact: false` reads "1,000+".',
      }),
      nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
    }),
  ]),
  facets: Type.Optional(Facets),
})

/** `GET /users/me/saved`: the caller's saved services that are active, newest saved first. */
export const SavedServicesPage = Page(ServiceSummary)
export const SavedServicesQuery = Type.Composite([PageQuery], { additionalProperties: false })
export type SavedServicesQuery = Static<typeof SavedServicesQuery>

/** Above any package price (50,000) and inside what the database's integer cents hold. */
const PRICE_FILTER_MAX = 1_000_000
const PriceFilter = (description: string) =>
  Type.Number({ minimum: 0, maximum: PRICE_FILTER_MAX, errorMessage: `must be a number from 0 to ${PRICE_FILTER_MAX}`, description: `${description} 0 to ${PRICE_FILTER_MAX}.` })

export const serviceSorts = ['price', 'rating', 'createdAt', 'relevance'] as const

const listFilters = {
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: "The previous page's `pagination.nextCursor`, with the same `sortBy` and `sortOrder`: the next page, without counting the pages before it (use it instead of `page` for deep pages).",
    }),
  ),
  search: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Words to look for; typos are forgiven. Any text is accepted.' })),
  minPrice: Type.Optional(PriceFilter('Lowest starting price; not more than `maxPrice`.')),
  maxPrice: Type.Optional(PriceFilter('Highest starting price.')),
  sortBy: Type.Optional(
    Type.Union(
      serviceSorts.map((value) => Type.Literal(value)),
      { errorMessage: `must be one of ${serviceSorts.join(', ')}`, description: '`relevance` needs `search` and is its default; otherwise `createdAt`.' },
    ),
  ),
  sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { errorMessage: 'must be asc or desc', description: 'Default `desc`; `asc` for price.' })),
  sellerId: Type.Optional(Type.String({ format: 'uuid', errorMessage: 'must be a user id' })),
  tags: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'Comma-separated; a service matches when it carries any of them.' })),
  deliveryDays: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 90, errorMessage: 'must be a whole number of days from 1 to 90', description: 'At most this many days of delivery in the cheapest package.' }),
  ),
  minRating: Type.Optional(Type.Number({ minimum: 0, maximum: 5, errorMessage: 'must be a number from 0 to 5', description: "Lowest average rating of the service's reviews, 0 to 5." })),
  // One message on the parameter: its values are checked as a whole, whether sent once or repeated.
  sellerLevel: Type.Optional(
    Type.Array(Type.String({ maxLength: 60, pattern: `^(${sellerLevels.join('|')})(,(${sellerLevels.join('|')}))*$` }), {
      minItems: 1,
      maxItems: 4,
      errorMessage: `must be one or more of ${sellerLevels.join(', ')}, comma-separated or repeated`,
      description: 'Sellers at one of these levels: comma-separated (`level_two,top_rated`), or the parameter repeated.',
    }),
  ),
  sellerOnline: Type.Optional(
    Type.Boolean({ errorMessage: 'must be true or false', description: '`true`: only sellers with the chat open right now (within a second); `false` is the same as leaving it out.' }),
  ),
  facets: Type.Optional(Type.Boolean({ errorMessage: 'must be true or false', description: '`true` adds `facets` beside the page: counts per category, price band, delivery band and seller level.' })),
}

export const ListServicesQuery = Type.Composite(
  [PageQuery, Type.Object({ category: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A category id or slug; includes its subcategories.' })), ...listFilters })],
  { additionalProperties: false },
)
export type ListServicesQuery = Static<typeof ListServicesQuery>

export const CategoryServicesQuery = Type.Composite([PageQuery, Type.Object(listFilters)], { additionalProperties: false })
export type CategoryServicesQuery = Static<typeof CategoryServicesQuery>

export const CategoryRefParams = Type.Object({ categoryId: Type.String({ minLength: 1, maxLength: 100, description: 'A category id or slug.' }) })

export const ModerationQuery = Type.Composite(
  [PageQuery, Type.Object({ status: Type.Optional(Type.Unsafe<Static<typeof ServiceStatus>>({ ...ServiceStatus, default: 'pending' })) })],
  { additionalProperties: false },
)
export type ModerationQuery = Static<typeof ModerationQuery>

export const ServiceImageParams = Type.Object({ serviceId: Id, uploadId: Id })

export const ReorderImagesBody = Type.Object(
  {
    imageIds: Type.Array(Type.String({ format: 'uuid', errorMessage: 'must be an image id' }), {
      maxItems: 10,
      uniqueItems: true,
      description: 'Every current gallery image id, each once, in the new order.',
    }),
  },
  { additionalProperties: false, examples: [{ imageIds: ['0195ca1b-ecaf-7803-a1d0-a488cae2d33f', '0195b922-787a-7b13-a9ab-c278c945705f', '0195d0ac-6d98-7427-9444-23292a68403e'] }] },
)
export type ReorderImagesBody = Static<typeof ReorderImagesBody>

export const RejectServiceBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', errorMessage: 'must be 1 to 500 characters', description: 'Shown to the seller.' }) },
  {
    additionalProperties: false,
    examples: [{ reason: 'The gallery shows logos of well-known brands that are not your work. Replace them with your own designs and submit the service again.' }],
  },
)
export type RejectServiceBody = Static<typeof RejectServiceBody>

export const ServicesStats = Type.Object({
  total: Type.Integer({ description: 'Services not deleted.' }),
  byStatus: Type.Object(Object.fromEntries(serviceStatuses.map((status) => [status, Type.Integer()])), { description: 'Services not deleted, by status.' }),
})

export const GalleryForm = defineForm({
  files: { files: { description: 'The images: JPEG, PNG, WebP or GIF.', maxBytes: TAG_RULES.service_gallery.maxBytes, maxCount: GALLERY_LIMIT } },
})

export const BannerForm = defineForm({ files: { file: { description: 'The image (exactly one): JPEG, PNG, WebP or GIF.', maxBytes: TAG_RULES.service_banner.maxBytes } } })
