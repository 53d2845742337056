import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call, type Ok } from '../api.ts'
import { ActionButton, Badge, ErrorText, Loading, Pager, useAction, when } from '../ui.tsx'

type Endpoint = Ok<'/api/v1/admin/webhooks', 'get'>['items'][number]

function Deliveries({ webhookId }: { webhookId: string }) {
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['deliveries', webhookId, page], queryFn: () => call(api.GET('/api/v1/admin/webhooks/{webhookId}/deliveries', { params: { path: { webhookId }, query: { page, limit: 10 } } })) })
  const retry = useAction((deliveryId: string) => call(api.POST('/api/v1/admin/webhook-deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } })), ['deliveries'])
  return (
    <>
      <ErrorText error={list.error ?? retry.error} />
      {list.isPending && <Loading what="deliveries" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">Retry</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={6}>No deliveries yet.</td>
              </tr>
            )}
            {list.data.items.map((delivery) => (
              <tr key={delivery.id}>
                <td>{delivery.event}</td>
                <td>
                  <Badge value={delivery.status} />
                </td>
                <td>{delivery.attemptCount}</td>
                <td>{delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
                <td>{when(delivery.createdAt)}</td>
                <td>{delivery.status !== 'succeeded' && <ActionButton label="Retry" busy={retry.isPending} onClick={() => retry.mutate(delivery.id)} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}

function EndpointCard({ endpoint }: { endpoint: Endpoint }) {
  const path = { params: { path: { webhookId: endpoint.id } } }
  const test = useAction(() => call(api.POST('/api/v1/admin/webhooks/{webhookId}/test', path)), ['deliveries'])
  const rotate = useAction(() => call(api.POST('/api/v1/admin/webhooks/{webhookId}/rotate-secret', path)), ['webhooks'])
  return (
    <section className="card" aria-labelledby={`endpoint-${endpoint.id}`}>
      <h2 id={`endpoint-${endpoint.id}`}>{endpoint.url}</h2>
      <p className="meta">
        <Badge value={endpoint.enabled ? 'enabled' : 'disabled'} /> {endpoint.description} · events: {endpoint.events?.join(', ') ?? 'all'} · {endpoint.source}
        {endpoint.disabledReason && ` · disabled: ${endpoint.disabledReason}`}
        {endpoint.failingSince && ` · failing since ${when(endpoint.failingSince)}`}
      </p>
      {endpoint.source === 'api' && (
        <div className="actions">
          <ActionButton label="Send a test event" busy={test.isPending} onClick={() => test.mutate(undefined)} />
          <ActionButton label="Rotate the secret" kind="danger" busy={rotate.isPending} onClick={() => rotate.mutate(undefined)} />
        </div>
      )}
      <ErrorText error={test.error ?? rotate.error} />
      {rotate.data && (
        <p role="status">
          New secret (shown once): <code>{rotate.data.secret}</code>
        </p>
      )}
      <details>
        <summary>Deliveries</summary>
        <Deliveries webhookId={endpoint.id} />
      </details>
    </section>
  )
}

export function WebhooksPage() {
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['webhooks', page], queryFn: () => call(api.GET('/api/v1/admin/webhooks', { params: { query: { page, limit: 20 } } })) })
  return (
    <>
      <h1>Webhooks</h1>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="endpoints" />}
      {list.data?.items.length === 0 && <p>No endpoints registered.</p>}
      {list.data?.items.map((endpoint) => <EndpointCard key={endpoint.id} endpoint={endpoint} />)}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}

/** The event log, read forward with its cursor. */
export function EventsPage() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const after = cursors.at(-1)
  const list = useQuery({ queryKey: ['events', after], queryFn: () => call(api.GET('/api/v1/admin/events', { params: { query: { after, limit: 25 } } })) })
  return (
    <>
      <h1>Events</h1>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="events" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Cursor</th>
              <th scope="col">Event</th>
              <th scope="col">When</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={4}>No events.</td>
              </tr>
            )}
            {list.data.items.map((event) => (
              <tr key={event.id}>
                <td>{event.cursor}</td>
                <td>{event.event}</td>
                <td>{when(event.timestamp)}</td>
                <td>
                  <details>
                    <summary>Payload</summary>
                    <pre>{JSON.stringify(event.data, null, 1)}</pre>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors((current) => current.slice(0, -1))}>
          Earlier
        </button>
        <button type="button" disabled={!list.data?.hasMore} onClick={() => list.data && setCursors((current) => [...current, list.data.nextCursor])}>
          Later
        </button>
      </nav>
    </>
  )
}
