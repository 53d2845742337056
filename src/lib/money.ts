/**
 * Money travels as a JSON number with two decimals and is stored as integer cents.
 * Floating point cannot hold most decimals exactly (19.99 is 19.989999...): a client that
 * computes 57 x 0.01 sends 0.5700000000000001. "At most two decimals" therefore means "a whole
 * number of cents within floating-point error", the same test the request schemas' `multipleOf:
 * 0.01` runs (Ajv with `multipleOfPrecision`), so what validation lets through is never refused
 * here, and a third decimal (0.1 of a cent away at least) always is.
 */

/** The decimal places of "within floating-point error": the `multipleOfPrecision` of the request validator. */
export const CENT_PRECISION = 6

/** The step of every amount in a request: one cent. */
export const CENT = 0.01

/** The amount in integer cents, or undefined when it is not finite or has more than two decimals. */
export function toCents(amount: number): number | undefined {
  if (!Number.isFinite(amount)) return undefined
  // Computed as Ajv's multipleOf does (the quotient, then its distance to the nearest integer).
  const units = amount / CENT
  const cents = Math.round(units)
  return Math.abs(cents - units) > 10 ** -CENT_PRECISION ? undefined : cents + 0
}

/** Integer cents as the API's two-decimal number. */
export const fromCents = (cents: number): number => cents / 100

/**
 * `cents` times `part / whole`, rounded half-up to the cent, exactly (in integers, whatever the
 * sizes): an order's fee rate applied to part of its escrow.
 */
export const proportionOfCents = (cents: number, part: number, whole: number): number => Number((2n * BigInt(cents) * BigInt(part) + BigInt(whole)) / (2n * BigInt(whole)))

/**
 * A share of an amount in basis points (10 % = 1000), rounded half-up to the cent: the platform's
 * fee on an order, a tip. Order placement computes the same in its statement.
 */
export const basisPointsOfCents = (cents: number, basisPoints: number): number => proportionOfCents(cents, basisPoints, 10_000)
