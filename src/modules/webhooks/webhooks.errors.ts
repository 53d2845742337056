import { defineErrors, fail, type AppError } from '../../lib/errors.ts'

/** Codes this module answers with besides the common ones; clients switch on them, so they never change. */
export const webhooksErrors = defineErrors({
  STATIC_ENDPOINT: { status: 422, description: 'The endpoint comes from the configuration (`WEBHOOK_URL`): only `enabled` can be changed here.' },
  ENDPOINT_DISABLED: { status: 422, description: 'The endpoint is disabled: enable it before sending to it.' },
  DELIVERY_IN_PROGRESS: { status: 422, description: 'The delivery is being attempted right now; retry it once the attempt ends.' },
})

export const staticEndpoint = (what: string): AppError => fail(webhooksErrors.STATIC_ENDPOINT, `The configured endpoint cannot be ${what}; change WEBHOOK_URL or WEBHOOK_SECRET instead`)

export const endpointDisabled = (): AppError => fail(webhooksErrors.ENDPOINT_DISABLED, 'The endpoint is disabled; enable it first')

export const deliveryInProgress = (): AppError => fail(webhooksErrors.DELIVERY_IN_PROGRESS, 'The delivery is being attempted right now')
