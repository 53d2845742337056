import { describe, expect, it } from 'vitest'
import { basisPointsOfCents, fromCents, proportionOfCents, toCents } from './money.ts'

describe('money', () => {
  it('converts two-decimal amounts to cents exactly, despite binary floating point', () => {
    expect(toCents(19.99)).toBe(1999)
    expect(toCents(0.29)).toBe(29)
    expect(toCents(1.005 + 0)).toBeUndefined()
    expect(toCents(50000)).toBe(5_000_000)
    expect(toCents(5.1)).toBe(510)
  })

  it('takes a whole number of cents within floating-point error, as the validator does', () => {
    expect(toCents(0.1 + 0.2)).toBe(30)
    expect(toCents(57 * 0.01)).toBe(57)
    expect(toCents(0.07)).toBe(7)
    expect(toCents(999_999.99)).toBe(99_999_999)
    expect(toCents(-0.0)).toBe(0)
    expect(Object.is(toCents(-0.0), -0)).toBe(false)
  })

  it('refuses three decimals and non-finite numbers', () => {
    expect(toCents(10.001)).toBeUndefined()
    expect(toCents(Number.NaN)).toBeUndefined()
    expect(toCents(Number.POSITIVE_INFINITY)).toBeUndefined()
  })

  it('turns cents back into the same two-decimal number', () => {
    for (const cents of [1, 29, 999, 1999, 123_456, 5_000_000]) expect(toCents(fromCents(cents))).toBe(cents)
    expect(fromCents(1999)).toBe(19.99)
  })

  it('takes a share in basis points rounded half-up to the cent', () => {
    expect(basisPointsOfCents(10_000, 1000)).toBe(1000)
    expect(basisPointsOfCents(5, 1000)).toBe(1) // 0.5 cent rounds up
    expect(basisPointsOfCents(4, 1000)).toBe(0) // 0.4 cent rounds down
    expect(basisPointsOfCents(3335, 1000)).toBe(334)
    expect(basisPointsOfCents(12_345, 0)).toBe(0)
  })

  it('takes a proportion rounded half-up to the cent, exactly whatever the sizes', () => {
    expect(proportionOfCents(6665, 1000, 10_000)).toBe(667) // 666.5 rounds up
    expect(proportionOfCents(9994, 1000, 10_000)).toBe(999)
    expect(proportionOfCents(3, 1, 5)).toBe(1) // 0.6
    expect(proportionOfCents(2, 1, 5)).toBe(0) // 0.4
    expect(proportionOfCents(0, 1000, 10_000)).toBe(0)
    // Past 2^53 in the intermediate product: 99,999,999.99 at a 99.99 % fee of a total of the same size.
    expect(proportionOfCents(9_999_999_999, 9_999_000_000, 9_999_999_999)).toBe(9_999_000_000)
    for (const cents of [1, 5, 4, 3335, 999_999]) expect(proportionOfCents(cents, 1000, 10_000)).toBe(basisPointsOfCents(cents, 1000))
  })
})
