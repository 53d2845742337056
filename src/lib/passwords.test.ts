import { afterAll, describe, expect, it } from 'vitest'
import { defaultHashConcurrency, hashPassword, limitPasswordHashing, passwordHashingLoad, verifyPassword } from './passwords.ts'

describe('password hashing under a bound', () => {
  afterAll(() => limitPasswordHashing(defaultHashConcurrency()))

  it('computes at most the configured number of argon2 hashes at once; the rest queue and all finish', async () => {
    limitPasswordHashing(1)
    const hashes = Array.from({ length: 3 }, (_, index) => hashPassword(`Password${index}`))
    expect(passwordHashingLoad()).toEqual({ running: 1, waiting: 2 })
    const done = await Promise.all(hashes)
    expect(passwordHashingLoad()).toEqual({ running: 0, waiting: 0 })
    expect(await verifyPassword(done[2]!, 'Password2')).toBe(true)
    expect(await verifyPassword(done[2]!, 'Password1')).toBe(false)
  })

  it('starts waiting hashes at once when the bound is raised', async () => {
    limitPasswordHashing(1)
    const hashes = Array.from({ length: 3 }, (_, index) => hashPassword(`Password${index}`))
    expect(passwordHashingLoad()).toEqual({ running: 1, waiting: 2 })
    limitPasswordHashing(3)
    await Promise.resolve() // the new bound applies from the next microtask
    expect(passwordHashingLoad()).toEqual({ running: 3, waiting: 0 })
    await Promise.all(hashes)
  })
})
