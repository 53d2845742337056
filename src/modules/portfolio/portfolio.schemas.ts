import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import { Id, Nullable, Timestamp } from '../../http/common.schemas.ts'
import { skillLevels } from './portfolio.table.ts'

const Name = (max: number, description: string) =>
  Type.String({ minLength: 1, maxLength: max, pattern: '\\S', errorMessage: `must be 1 to ${max} characters, not only spaces`, description })

const Text = (max: number, description: string) => Type.String({ maxLength: max, errorMessage: `must be at most ${max} characters`, description })

const CalendarDate = Type.String({ format: 'date', maxLength: 10, pattern: '^[1-9][0-9]{3}-', errorMessage: 'must be a date as YYYY-MM-DD', description: 'A calendar date, `YYYY-MM-DD`.' })

const StartDate = CalendarDate
const EndDate = (meaning: string) => Nullable(Type.String({ ...CalendarDate, description: `Not before \`startDate\`; \`null\` means ${meaning}.` }))

const SkillLevel = Type.Union(
  skillLevels.map((value) => Type.Literal(value)),
  { errorMessage: `must be one of ${skillLevels.join(', ')}` },
)

const YearsOfExperience = Type.Number({ minimum: 0, maximum: 70, errorMessage: 'must be a number from 0 to 70', description: 'Fractions are allowed, e.g. `1.5`.' })

const ProjectUrl = Type.String({
  maxLength: 500,
  format: 'uri',
  // Shown as a link on the public profile: other schemes (javascript:, data:) would be a script vector.
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]',
  errorMessage: 'must be an http or https URL of at most 500 characters',
  description: 'An http or https address.',
})

// No errorMessage here: one on the array would also swallow its items' errors, which keep their
// own path (`technologies.3`). (ajv-errors' per-keyword object form adds an empty error under singleError.)
const Technologies = Type.Array(Name(50, 'A technology, e.g. `PostgreSQL`.'), { maxItems: 20, uniqueItems: true, description: 'At most 20, each once.' })

/** Fields every record carries: its id, its owner and when it was made and changed. */
const owned = {
  id: Id,
  userId: Type.String({ format: 'uuid', description: 'The owner.' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}

/** A create-body field that may be left out; Ajv fills in `value` (and the API docs show it). */
const Defaulted = <T extends TSchema>(schema: T, value: Static<T>) => Type.Optional(Type.Unsafe<Static<T>>({ ...schema, default: value }))

/** A partial update body: the same fields, none required and no defaults, so a field left out keeps its value. */
const UpdateBody = <T extends TProperties>(fields: T, description: string, examples: Partial<Static<TObject<T>>>[]) =>
  Type.Partial(Type.Object(fields), {
    additionalProperties: false,
    minProperties: 1,
    description: `Only the fields sent change; at least one is required. ${description}`.trim(),
    examples,
  })

const DATED = 'The stored record with these changes must still end no earlier than it starts.'

const skillFields = {
  name: Name(50, 'e.g. `TypeScript`.'),
  level: SkillLevel,
  yearsOfExperience: YearsOfExperience,
}

export const Skill = Type.Object(
  { ...owned, name: Type.String(), level: SkillLevel, yearsOfExperience: Type.Number() },
  { description: 'A skill; lists are ordered by name.' },
)
export const CreateSkillBody = Type.Object(skillFields, { additionalProperties: false, examples: [{ name: 'Adobe Illustrator', level: 'expert', yearsOfExperience: 8 }] })
export type CreateSkillBody = Static<typeof CreateSkillBody>
export const UpdateSkillBody = UpdateBody(skillFields, '', [{ level: 'expert', yearsOfExperience: 9.5 }])
export type UpdateSkillBody = Static<typeof UpdateSkillBody>

const projectFields = {
  title: Name(100, 'The project name.'),
  description: Text(2000, 'What it is and what the user did.'),
  url: Nullable(ProjectUrl),
  startDate: StartDate,
  endDate: EndDate('ongoing'),
  technologies: Technologies,
}

export const Project = Type.Object(
  {
    ...owned,
    title: Type.String(),
    description: Type.String(),
    url: Nullable(Type.String()),
    startDate: CalendarDate,
    endDate: Nullable(CalendarDate),
    technologies: Type.Array(Type.String()),
  },
  { description: 'A project; lists are ordered by start date, newest first.' },
)
export const CreateProjectBody = Type.Object(
  {
    ...projectFields,
    description: Defaulted(projectFields.description, ''),
    url: Defaulted(projectFields.url, null),
    endDate: Defaulted(projectFields.endDate, null),
    technologies: Defaulted(projectFields.technologies, []),
  },
  {
    additionalProperties: false,
    examples: [
      {
        title: 'Rebrand of Panadería Sol',
        description: 'New logo, colour palette and packaging for a family bakery with three shops in Valencia.',
        url: 'https://www.behance.net/gallery/184512337/panaderia-sol-rebrand',
        startDate: '2024-02-05',
        endDate: '2024-04-19',
        technologies: ['Adobe Illustrator', 'Figma'],
      },
    ],
  },
)
export type CreateProjectBody = Static<typeof CreateProjectBody>
export const UpdateProjectBody = UpdateBody(projectFields, DATED, [{ endDate: '2024-05-03', technologies: ['Adobe Illustrator', 'Figma', 'Procreate'] }])
export type UpdateProjectBody = Static<typeof UpdateProjectBody>

const experienceFields = {
  company: Name(100, 'The employer or client.'),
  position: Name(100, 'The role held.'),
  description: Text(2000, 'What the user did there.'),
  location: Text(100, 'City, country or `Remote`.'),
  startDate: StartDate,
  endDate: EndDate('a current position'),
}

export const Experience = Type.Object(
  {
    ...owned,
    company: Type.String(),
    position: Type.String(),
    description: Type.String(),
    location: Type.String(),
    startDate: CalendarDate,
    endDate: Nullable(CalendarDate),
  },
  { description: 'A position held; lists are ordered by start date, newest first.' },
)
export const CreateExperienceBody = Type.Object(
  {
    ...experienceFields,
    description: Defaulted(experienceFields.description, ''),
    location: Defaulted(experienceFields.location, ''),
    endDate: Defaulted(experienceFields.endDate, null),
  },
  {
    additionalProperties: false,
    examples: [
      {
        company: 'Estudio Norte',
        position: 'Senior brand designer',
        description: 'Led identity projects for hospitality clients, from discovery workshops to brand guidelines.',
        location: 'Madrid, Spain',
        startDate: '2019-09-02',
        endDate: '2023-12-22',
      },
    ],
  },
)
export type CreateExperienceBody = Static<typeof CreateExperienceBody>
export const UpdateExperienceBody = UpdateBody(experienceFields, DATED, [{ position: 'Lead brand designer', location: 'Remote' }])
export type UpdateExperienceBody = Static<typeof UpdateExperienceBody>

const educationFields = {
  institution: Name(150, 'The school or university.'),
  degree: Name(100, 'e.g. `BSc`.'),
  fieldOfStudy: Name(100, 'e.g. `Computer Science`.'),
  startDate: StartDate,
  endDate: EndDate('still studying'),
  grade: Nullable(Text(20, 'The grade or GPA as printed, e.g. `3.8/4`.')),
  description: Text(2000, 'Thesis, honours, activities.'),
}

export const Education = Type.Object(
  {
    ...owned,
    institution: Type.String(),
    degree: Type.String(),
    fieldOfStudy: Type.String(),
    startDate: CalendarDate,
    endDate: Nullable(CalendarDate),
    grade: Nullable(Type.String()),
    description: Type.String(),
  },
  { description: 'A course of study; lists are ordered by start date, newest first.' },
)
export const CreateEducationBody = Type.Object(
  {
    ...educationFields,
    endDate: Defaulted(educationFields.endDate, null),
    grade: Defaulted(educationFields.grade, null),
    description: Defaulted(educationFields.description, ''),
  },
  {
    additionalProperties: false,
    examples: [
      {
        institution: 'Universidad Complutense de Madrid',
        degree: 'BA',
        fieldOfStudy: 'Graphic Design',
        startDate: '2013-09-16',
        endDate: '2017-06-30',
        grade: '8.7/10',
        description: 'Thesis on wayfinding systems for public transport.',
      },
    ],
  },
)
export type CreateEducationBody = Static<typeof CreateEducationBody>
export const UpdateEducationBody = UpdateBody(educationFields, DATED, [{ grade: '9.1/10', description: 'Graduated with honours; thesis on wayfinding systems for public transport.' }])
export type UpdateEducationBody = Static<typeof UpdateEducationBody>

export const Portfolio = Type.Object(
  {
    skills: Type.Array(Skill),
    projects: Type.Array(Project),
    experiences: Type.Array(Experience),
    education: Type.Array(Education),
  },
  { description: 'Everything a user shows on their public profile, each list in its own order.' },
)
