/**
 * Money travels as a JSON number with two decimals and is stored as integer cents (DESIGN 4).
 * Floating point cannot hold most decimals exactly (19.99 is 19.989999...), so "at most two
 * decimals" is checked by a round trip: the cents, divided back, must give the very same number.
 */

/** The amount in integer cents, or undefined when it is not finite or has more than two decimals. */
export function toCents(amount: number): number | undefined {
  if (!Number.isFinite(amount)) return undefined
  const cents = Math.round(amount * 100)
  // An integer divided by 100 is the double nearest the two-decimal value, as parsing it would be.
  return cents / 100 === amount ? cents : undefined
}

/** Integer cents as the API's two-decimal number. */
export const fromCents = (cents: number): number => cents / 100
