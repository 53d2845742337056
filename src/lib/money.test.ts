import { describe, expect, it } from 'vitest'
import { basisPointsOfCents, fromCents, toCents } from './money.ts'

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
})
