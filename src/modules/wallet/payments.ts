/**
 * Where money comes from. A provider is asked to collect an amount for a deposit; it answers at
 * once (`succeeded` or `failed`) or later (`pending`, confirmed by the provider's webhook calling
 * `confirmDeposit`). Callers never know which provider runs (decision 0021).
 */
export interface PaymentsProvider {
  readonly name: string
  /** Whether deposits may be taken at all on this deployment. */
  readonly isAvailable: boolean
  collect(request: { depositId: string; userId: string; amountCents: number; currency: string }): Promise<PaymentOutcome>
}

export type PaymentOutcome = { status: 'succeeded'; reference: string } | { status: 'pending'; reference: string } | { status: 'failed'; reason: string }

/**
 * Credits at once, without any money changing hands: for development, demos and tests. Refused
 * in production unless PAYMENTS_SANDBOX_ENABLED=true (a staging deployment, say).
 */
export function createSandboxProvider(options: { enabled: boolean }): PaymentsProvider {
  return {
    name: 'sandbox',
    isAvailable: options.enabled,
    async collect({ depositId }) {
      return { status: 'succeeded', reference: `sandbox_${depositId}` }
    },
  }
}
