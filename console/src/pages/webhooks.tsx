import { useQuery } from '@tanstack/react-query'
import { useState, type FormEvent } from 'react'
import { api, call, type Ok, type paths } from '../api.ts'
import { ActionButton, Badge, ConfirmAction, ErrorText, Field, Loading, Pager, useAction, when } from '../ui.tsx'

type Endpoint = Ok<'/api/v1/admin/webhooks', 'get'>['items'][number]
type EventName = NonNullable<paths['/api/v1/admin/webhooks']['post']['requestBody']['content']['application/json']['events']>[number]
const deliveryStatuses = ['pending', 'delivering', 'succeeded', 'failed'] as const

function Deliveries({ webhookId }: { webhookId: string }) {
  const [status, setStatus] = useState<(typeof deliveryStatuses)[number] | undefined>(undefined)
  const [page, setPage] = useState(1)
  const list = useQuery({
    queryKey: ['deliveries', webhookId, status, page],
    queryFn: () => call(api.GET('/api/v1/admin/webhooks/{webhookId}/deliveries', { params: { path: { webhookId }, query: { page, limit: 10, ...(status && { status }) } } })),
  })
  const retry = useAction((deliveryId: string) => call(api.POST('/api/v1/admin/webhook-deliveries/{deliveryId}/retry', { params: { path: { deliveryId } } })), ['deliveries'])
  return (
    <>
      <div className="filters">
        <Field label="Status">
          <select
            value={status ?? ''}
            onChange={(event) => {
              setStatus((event.target.value || undefined) as typeof status)
              setPage(1)
            }}
          >
            <option value="">any</option>
            {deliveryStatuses.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </Field>
      </div>
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
                <td>
                  <ActionButton label={delivery.status === 'succeeded' ? 'Send again' : 'Retry'} busy={retry.isPending} onClick={() => retry.mutate(delivery.id)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} label="deliveries" />
    </>
  )
}

/** A new endpoint: its signing secret is in the answer only, so it is shown once here. */
function NewEndpoint() {
  const create = useAction(
    (body: { url: string; description?: string; events?: EventName[] }) => call(api.POST('/api/v1/admin/webhooks', { body })),
    ['webhooks'],
  )
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const text = (name: string) => ((form.get(name) as string | null) ?? '').trim()
    const events = text('events')
      .split(/[\s,]+/)
      .filter(Boolean) as EventName[]
    create.mutate({ url: text('url'), ...(text('description') && { description: text('description') }), ...(events.length > 0 && { events }) })
  }
  return (
    <details className="card">
      <summary>New endpoint</summary>
      <form onSubmit={submit} aria-label="New endpoint">
        <div className="filters">
          <Field label="URL">
            <input name="url" type="url" required placeholder="https://hooks.example.com/marketplace" size={40} />
          </Field>
          <Field label="Description">
            <input name="description" maxLength={200} />
          </Field>
          <Field label="Events (separated by commas; none: every event)">
            <input name="events" placeholder="order.created, order.completed" size={40} />
          </Field>
        </div>
        <button type="submit" disabled={create.isPending}>
          Register
        </button>
        <ErrorText error={create.error} />
        {create.data && (
          <p role="status">
            Registered {create.data.url}. Its signing secret, shown this once: <code>{create.data.secret}</code>
          </p>
        )}
      </form>
    </details>
  )
}

function EndpointCard({ endpoint }: { endpoint: Endpoint }) {
  const path = { params: { path: { webhookId: endpoint.id } } }
  const test = useAction(() => call(api.POST('/api/v1/admin/webhooks/{webhookId}/test', path)), ['deliveries'])
  const rotate = useAction(() => call(api.POST('/api/v1/admin/webhooks/{webhookId}/rotate-secret', path)), ['webhooks'])
  const toggle = useAction((enabled: boolean) => call(api.PATCH('/api/v1/admin/webhooks/{webhookId}', { ...path, body: { enabled } })), ['webhooks'])
  const remove = useAction(() => call(api.DELETE('/api/v1/admin/webhooks/{webhookId}', path)), ['webhooks'])
  return (
    <section className="card" aria-labelledby={`endpoint-${endpoint.id}`}>
      <h2 id={`endpoint-${endpoint.id}`}>{endpoint.url}</h2>
      <p className="meta">
        <Badge value={endpoint.enabled ? 'enabled' : 'disabled'} /> {endpoint.description} · events: {endpoint.events?.join(', ') ?? 'all'} · {endpoint.source}
        {endpoint.disabledReason && ` · disabled: ${endpoint.disabledReason}`}
        {endpoint.failingSince && ` · failing since ${when(endpoint.failingSince)}`}
      </p>
      <div className="actions">
        {endpoint.enabled && <ActionButton label="Send a test event" busy={test.isPending} onClick={() => test.mutate(undefined)} />}
        {endpoint.enabled ? (
          <ActionButton label="Disable" kind="danger" busy={toggle.isPending} onClick={() => toggle.mutate(false)} />
        ) : (
          <ActionButton label="Enable" busy={toggle.isPending} onClick={() => toggle.mutate(true)} />
        )}
        {endpoint.source === 'api' && (
          <>
            <ConfirmAction
              label="Rotate the secret"
              warning="A new secret signs from now on; the previous one keeps signing for a day, so the receiver can switch."
              busy={rotate.isPending}
              error={rotate.error}
              onConfirm={() => rotate.mutate(undefined)}
            />
            <ConfirmAction label="Delete the endpoint" warning="Its delivery log goes with it." busy={remove.isPending} error={remove.error} onConfirm={() => remove.mutate(undefined)} />
          </>
        )}
      </div>
      {test.data && <p role="status">Test event queued: delivery {test.data.id.slice(-8)}, {test.data.status}.</p>}
      <ErrorText error={test.error ?? toggle.error} />
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
      <NewEndpoint />
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
