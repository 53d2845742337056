/** The event a test send carries; it goes to one endpoint and is not in the event log. */
export const TEST_EVENT = 'webhook.test'

/**
 * The exact JSON that is signed and sent: `{ event, timestamp, cursor, data }`. `cursor` is the
 * event's place in the event log, so a receiver can put deliveries, which may arrive in any
 * order, back in the log's order; a test message, which is not in the log, has none.
 */
export const messageBody = (event: string, timestamp: Date, data: Record<string, unknown>, cursor?: string): string =>
  JSON.stringify({ event, timestamp: timestamp.toISOString(), ...(cursor !== undefined && { cursor }), data })
