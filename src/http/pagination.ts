export interface PageRequest {
  page: number
  limit: number
}

export interface PageResult<T> {
  items: T[]
  pagination: { page: number; limit: number; total: number; pages: number; hasNext: boolean; hasPrev: boolean }
}

export const offsetOf = ({ page, limit }: PageRequest): number => (page - 1) * limit

export function toPage<T>(items: T[], total: number, { page, limit }: PageRequest): PageResult<T> {
  const pages = Math.ceil(total / limit)
  return { items, pagination: { page, limit, total, pages, hasNext: page < pages, hasPrev: page > 1 } }
}
