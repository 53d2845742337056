import { Type } from '@sinclair/typebox'

/**
 * The rules an account's e-mail, password, name and username follow wherever they come from: the
 * API's bodies, the command line and the environment (the first administrator). TypeBox only, so
 * the configuration can check them before anything else is loaded.
 */
export const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  pattern: '^\\s*[^\\s@]+@[^\\s@]+\\.[^\\s@]+\\s*$',
  errorMessage: 'must be a valid e-mail address',
  description: 'Trimmed and lowercased before use.',
})

export const Password = Type.String({
  minLength: 8,
  maxLength: 128,
  pattern: '^(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])',
  errorMessage: 'must be 8 to 128 characters and contain an uppercase letter, a lowercase letter and a digit',
})

export const FullName = Type.String({
  minLength: 2,
  maxLength: 100,
  pattern: '^\\s*\\S.*\\S\\s*$',
  errorMessage: 'must be 2 to 100 characters',
})

export const Username = Type.String({
  minLength: 3,
  maxLength: 20,
  pattern: '^[a-z0-9_]+$',
  errorMessage: 'must be 3 to 20 characters of lowercase letters, digits and underscores',
})
