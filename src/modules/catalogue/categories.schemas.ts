import { Type, type Static } from '@sinclair/typebox'
import { Id, Nullable } from '../../http/common.schemas.ts'
import { POSITION_MAX, SLUG_MAX } from './categories.table.ts'

const SLUG_PATTERN = '[a-z0-9]+(-[a-z0-9]+)*'
const UUID_PATTERN = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'

const CategoryName = Type.String({
  minLength: 2,
  maxLength: 60,
  pattern: '^\\S(.*\\S)?$',
  errorMessage: 'must be 2 to 60 characters without surrounding spaces',
  description: 'Display name, e.g. `Logo Design`.',
})

const Slug = Type.String({
  maxLength: SLUG_MAX,
  pattern: `^${SLUG_PATTERN}$`,
  errorMessage: `must be lowercase letters and digits joined by single hyphens, at most ${SLUG_MAX} characters`,
  description: 'Unique address name, e.g. `logo-design`.',
})

const Description = Type.String({ maxLength: 500, errorMessage: 'must be at most 500 characters', description: 'Short text shown under the name.' })

const ParentId = Nullable(
  Type.String({
    format: 'uuid',
    errorMessage: 'must be the id of a top-level category, or null',
    description: 'A top-level category makes this a subcategory; `null` makes it top-level. Two levels only.',
  }),
)

const Position = Type.Integer({
  minimum: 0,
  maximum: POSITION_MAX,
  errorMessage: `must be an integer from 0 to ${POSITION_MAX}`,
  description: 'Sort order among siblings, ascending; ties are ordered by name.',
})

export const CategoryParams = Type.Object({
  categoryId: Type.String({ maxLength: 100, pattern: `^(${UUID_PATTERN}|${SLUG_PATTERN})$`, description: 'The category id or its slug.' }),
})
export type CategoryParams = Static<typeof CategoryParams>

export const CategoryNode = Type.Object({
  id: Id,
  name: Type.String(),
  slug: Type.String(),
  description: Type.String(),
  parentId: Nullable(Id),
  position: Type.Integer(),
  servicesCount: Type.Integer({ description: 'Active services in it; for a top-level category, its subcategories included.' }),
})

export const CategoryTreeItem = Type.Object({ ...CategoryNode.properties, subcategories: Type.Array(CategoryNode) })

export const Category = Type.Object({
  ...CategoryNode.properties,
  subcategories: Type.Array(CategoryNode, { description: 'Empty for a subcategory.' }),
  parent: Nullable(Type.Object({ id: Id, name: Type.String(), slug: Type.String() }, { description: 'The parent of a subcategory; `null` at the top level.' })),
})

export const CreateCategoryBody = Type.Object(
  {
    name: CategoryName,
    slug: Type.Optional(Type.String({ ...Slug, description: 'Made from the name when left out (`-2`, `-3`, ... when taken; `category` for a name without Latin letters or digits).' })),
    description: Type.Optional(Description),
    parentId: Type.Optional(ParentId),
    position: Type.Optional(Type.Integer({ ...Position, description: 'Defaults to after the last sibling.' })),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Packaging Design', slug: 'packaging-design', description: 'Boxes, labels and bags that sell on the shelf.', parentId: '0196002d-6318-7906-9d18-4f6bfed31c59', position: 5 }],
  },
)
export type CreateCategoryBody = Static<typeof CreateCategoryBody>

export const UpdateCategoryBody = Type.Object(
  {
    name: Type.Optional(CategoryName),
    slug: Type.Optional(Slug),
    description: Type.Optional(Description),
    parentId: Type.Optional(ParentId),
    position: Type.Optional(Position),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Logo & Brand Identity', description: 'Logos, marks and the rules that keep a brand consistent.', position: 0 }] },
)
export type UpdateCategoryBody = Static<typeof UpdateCategoryBody>

export const NotModified = Type.Null({ description: 'The copy the client holds (its `If-None-Match`) is current: no body.' })
