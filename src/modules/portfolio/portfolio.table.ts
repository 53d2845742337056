import { sql } from 'drizzle-orm'
import { check, date, doublePrecision, index, pgTable, text, timestamp, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core'
import { users } from '../users/users.table.ts'

export const skillLevels = ['beginner', 'intermediate', 'advanced', 'expert'] as const
export type SkillLevel = (typeof skillLevels)[number]

/** Columns every portfolio record carries (id, owner, timestamps); functions so each table gets its own builders. */
const ownerColumns = () => ({
  id: uuid('id').primaryKey(),
  userId: uuid('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
})

const timestampColumns = () => ({
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
})

/** Calendar dates without a time zone, read and written as `YYYY-MM-DD`; a null end means ongoing. */
const periodColumns = () => ({
  startDate: date('start_date', { mode: 'string' }).notNull(),
  endDate: date('end_date', { mode: 'string' }),
})

/** The service refuses an end before the start (400 on `endDate`); the database holds the line too. */
const periodCheck = (name: string, table: { startDate: AnyPgColumn; endDate: AnyPgColumn }) =>
  check(name, sql`${table.endDate} is null or ${table.endDate} >= ${table.startDate}`)

export const skills = pgTable(
  'skills',
  {
    ...ownerColumns(),
    name: text('name').notNull(),
    level: text('level', { enum: skillLevels }).notNull(),
    yearsOfExperience: doublePrecision('years_of_experience').notNull(),
    ...timestampColumns(),
  },
  (table) => [
    index('skills_user_id_idx').on(table.userId),
    check('skills_level_check', sql`${table.level} in ('beginner', 'intermediate', 'advanced', 'expert')`),
  ],
)

export const projects = pgTable(
  'projects',
  {
    ...ownerColumns(),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    url: text('url'),
    ...periodColumns(),
    technologies: text('technologies').array().notNull().default(sql`'{}'::text[]`),
    ...timestampColumns(),
  },
  (table) => [
    index('projects_user_id_idx').on(table.userId),
    periodCheck('projects_period_check', table),
  ],
)

export const experiences = pgTable(
  'experiences',
  {
    ...ownerColumns(),
    company: text('company').notNull(),
    position: text('position').notNull(),
    description: text('description').notNull().default(''),
    location: text('location').notNull().default(''),
    ...periodColumns(),
    ...timestampColumns(),
  },
  (table) => [
    index('experiences_user_id_idx').on(table.userId),
    periodCheck('experiences_period_check', table),
  ],
)

export const education = pgTable(
  'education',
  {
    ...ownerColumns(),
    institution: text('institution').notNull(),
    degree: text('degree').notNull(),
    fieldOfStudy: text('field_of_study').notNull(),
    grade: text('grade'),
    description: text('description').notNull().default(''),
    ...periodColumns(),
    ...timestampColumns(),
  },
  (table) => [
    index('education_user_id_idx').on(table.userId),
    periodCheck('education_period_check', table),
  ],
)

export type PortfolioTable = typeof skills | typeof projects | typeof experiences | typeof education

export type SkillRow = typeof skills.$inferSelect
export type ProjectRow = typeof projects.$inferSelect
export type ExperienceRow = typeof experiences.$inferSelect
export type EducationRow = typeof education.$inferSelect
