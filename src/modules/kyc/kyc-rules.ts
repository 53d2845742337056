import countries from 'i18n-iso-countries'
import { parsePhoneNumberFromString } from 'libphonenumber-js/max'
import type { FieldError } from '../../lib/errors.ts'

/** The youngest a seller may be (decision 0043). */
export const MINIMUM_AGE = 18

const ALPHA_2 = new Set(Object.keys(countries.getAlpha2Codes()))

export interface PersonalDetailsInput {
  firstName: string
  lastName: string
  dateOfBirth: string
  country: string
  phone: string
}

/**
 * Checks step 1 beyond its shape: a real calendar date at least 18 years before `today`, an
 * assigned ISO 3166-1 alpha-2 code (i18n-iso-countries; `USA` is alpha-3 and refused), and a
 * phone number that libphonenumber-js (full metadata) finds valid in international form.
 * Answers the normalised details, or the problems by field.
 */
export function checkPersonalDetails(input: PersonalDetailsInput, today: Date): { details: PersonalDetailsInput } | { problems: FieldError[] } {
  const problems: FieldError[] = []
  const dateOfBirth = checkDateOfBirth(input.dateOfBirth, today)
  if (dateOfBirth) problems.push({ field: 'dateOfBirth', message: dateOfBirth })
  const country = input.country.trim().toUpperCase()
  if (!/^[A-Z]{2}$/.test(country) || !ALPHA_2.has(country)) problems.push({ field: 'country', message: 'must be an ISO 3166-1 alpha-2 country code such as US or FR' })
  const phone = parsePhoneNumberFromString(input.phone.trim())
  if (!phone?.isValid()) problems.push({ field: 'phone', message: 'must be a valid phone number in international (E.164) form, such as +442071838750' })
  if (problems.length > 0) return { problems }
  return { details: { firstName: input.firstName.trim(), lastName: input.lastName.trim(), dateOfBirth: input.dateOfBirth, country, phone: phone!.number } }
}

/** Why a `YYYY-MM-DD` date of birth is refused, or undefined. */
function checkDateOfBirth(text: string, today: Date): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (!match) return 'must be a date in the form YYYY-MM-DD'
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return 'is not a real date'
  if (year < 1900) return 'must be after 1900'
  // The 18th birthday, in UTC; someone born on 29 February comes of age on 1 March.
  const ofAge = new Date(Date.UTC(year + MINIMUM_AGE, month - 1, day))
  if (ofAge.getTime() > today.getTime()) return `must be at least ${MINIMUM_AGE} years ago: sellers must be adults`
  return undefined
}
