import { Writable } from 'node:stream'
import { DrizzleQueryError } from 'drizzle-orm/errors'
import { describe, expect, it } from 'vitest'
import { createLogger } from './logger.ts'

function capture() {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString())
      done()
    },
  })
  return { logger: createLogger({ level: 'trace' }, stream), text: () => lines.join('') }
}

describe('the logger', () => {
  it('keeps the SQL of a failed query but not its parameters (identity data, e-mails, secrets)', () => {
    const { logger, text } = capture()
    const error = new DrizzleQueryError('insert into "kyc_submissions" ("first_name", "phone") values ($1, $2)', ['Ada', '+442071838750'], new Error('connection lost'))
    logger.error({ err: error }, 'unhandled error')
    expect(text()).toContain('insert into \\"kyc_submissions\\"')
    expect(text()).not.toContain('+442071838750')
    expect(text()).not.toContain('Ada')
  })

  it('redacts identity fields wherever they appear', () => {
    const { logger, text } = capture()
    logger.info({ body: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1990-05-17', phone: '+442071838750', country: 'GB' } }, 'request body')
    for (const value of ['Ada', 'Lovelace', '1990-05-17', '+442071838750']) expect(text()).not.toContain(value)
    expect(text()).toContain('"country":"GB"')
  })
})
