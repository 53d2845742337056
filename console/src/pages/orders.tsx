import { useQuery } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { useId, useState, type FormEvent } from 'react'
import { api, call, type Ok } from '../api.ts'
import { Can, useSession } from '../session.tsx'
import { ActionButton, Badge, ErrorText, Field, Loading, money, Pager, ReasonAction, useAction, when } from '../ui.tsx'

type Order = Ok<'/api/v1/admin/orders', 'get'>['items'][number]
const statuses = ['disputed', 'pending', 'in_progress', 'delivered', 'completed', 'cancelled'] as const
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * A split resolution: part of the escrow back to the buyer, the rest to the seller less the fee on
 * it (`POST /admin/orders/{orderId}/resolve`). The API checks the amount against the escrow.
 */
function SplitAction({ order }: { order: Order }) {
  const orderId = order.id
  const [open, setOpen] = useState(false)
  const amountId = useId()
  const noteId = useId()
  const split = useAction(
    (body: { refundAmount: number; note: string }) => call(api.POST('/api/v1/admin/orders/{orderId}/resolve', { params: { path: { orderId } }, body })),
    ['orders', 'stats', 'series'],
  )
  if (!open) return <ActionButton label="Split the escrow…" kind="danger" onClick={() => setOpen(true)} />
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    split.mutate({ refundAmount: Number(form.get('refundAmount')), note: (form.get('note') as string | null) ?? '' })
  }
  return (
    <form className="reason" onSubmit={submit}>
      <label htmlFor={amountId}>Refund to the buyer (of {money(order.total)})</label>
      <input id={amountId} name="refundAmount" type="number" min={0} max={order.total} step={0.01} required autoFocus />
      <label htmlFor={noteId}>Note</label>
      <textarea id={noteId} name="note" required maxLength={1000} rows={2} />
      <button type="submit" className="danger" disabled={split.isPending}>
        Split the escrow
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ErrorText error={split.error} />
    </form>
  )
}

function OrderActions({ order }: { order: Order }) {
  const orderId = order.id
  const resolve = useAction(
    (outcome: { status: 'completed' | 'cancelled'; reason: string }) => call(api.PUT('/api/v1/orders/{orderId}/status', { params: { path: { orderId } }, body: outcome })),
    ['orders', 'stats', 'series'],
  )
  const cancel = useAction((reason: string) => call(api.POST('/api/v1/admin/orders/{orderId}/cancel', { params: { path: { orderId } }, body: { reason } })), ['orders', 'stats'])
  return (
    <>
      {order.status === 'disputed' && (
        <Can permission="resolve_disputes">
          <div className="actions" aria-label="Resolve the dispute">
            <ReasonAction label="Pay the seller in full" busy={resolve.isPending} error={resolve.error} onSubmit={(reason) => resolve.mutate({ status: 'completed', reason })} />
            <ReasonAction label="Refund the buyer in full" busy={resolve.isPending} error={resolve.error} onSubmit={(reason) => resolve.mutate({ status: 'cancelled', reason })} />
            <SplitAction order={order} />
          </div>
        </Can>
      )}
      {(order.status === 'pending' || order.status === 'in_progress') && (
        <Can permission="manage_orders">
          <div className="actions">
            <ReasonAction label="Cancel and refund" busy={cancel.isPending} error={cancel.error} onSubmit={(reason) => cancel.mutate(reason)} />
          </div>
        </Can>
      )}
    </>
  )
}

/** An order of a list: its details (and their reads, such as the conversation) load when it is opened. */
function OrderRow({ order }: { order: Order }) {
  const [open, setOpen] = useState(false)
  return (
    <li>
      <details onToggle={(event) => setOpen(event.currentTarget.open)}>
        <summary>
          <Badge value={order.status} /> {order.serviceTitle} ({order.packageName}), {money(order.total)}, placed {when(order.createdAt)}
        </summary>
        {open && <OrderDetails order={order} />}
      </details>
    </li>
  )
}

/** The order's conversation, read-only, oldest of the page at the top; older pages through the API's cursor. */
function Conversation({ order }: { order: Order }) {
  const orderId = order.id
  const [cursor, setCursor] = useState<string | undefined>(undefined)
  const messages = useQuery({
    queryKey: ['orders', orderId, 'messages', cursor],
    queryFn: () => call(api.GET('/api/v1/admin/orders/{orderId}/messages', { params: { path: { orderId }, query: { limit: 20, ...(cursor && { cursor }) } } })),
  })
  const name = (senderId: string) => (senderId === order.buyer.id ? `${order.buyer.fullName} (buyer)` : senderId === order.seller.id ? `${order.seller.fullName} (seller)` : senderId)
  if (messages.isPending) return <Loading what="the conversation" />
  if (messages.isError) return <ErrorText error={messages.error} />
  const { items, pagination } = messages.data
  return (
    <section aria-label="Conversation">
      <h3>Conversation ({pagination.total} messages)</h3>
      {items.length === 0 ? (
        <p>No messages.</p>
      ) : (
        <ol className="timeline conversation">
          {[...items].reverse().map((message) => (
            <li key={message.id}>
              {when(message.createdAt)}, {name(message.senderId)}: <span className="pre">{message.content}</span>
              {message.attachment && (
                <>
                  {' '}
                  <a href={message.attachment.url}>{message.attachment.filename}</a>
                </>
              )}
              {message.offer && ` (offer: ${message.offer.title}, ${money(message.offer.price)}, ${message.offer.status})`}
            </li>
          ))}
        </ol>
      )}
      <div className="actions">
        {cursor !== undefined && (
          <button type="button" onClick={() => setCursor(undefined)}>
            Newest messages
          </button>
        )}
        {pagination.nextCursor && (
          <button type="button" onClick={() => setCursor(pagination.nextCursor ?? undefined)}>
            Older messages
          </button>
        )}
      </div>
    </section>
  )
}

function OrderDetails({ order }: { order: Order }) {
  const { can } = useSession()
  const person = (party: Order['buyer']) =>
    can('view_users') ? (
      <Link to="/users/$userId" params={{ userId: party.id }}>
        {party.fullName}
      </Link>
    ) : (
      party.fullName
    )
  return (
    <div className="order-details">
      <dl className="facts">
        <dt>Buyer</dt>
        <dd>
          {person(order.buyer)} @{order.buyer.username}
        </dd>
        <dt>Seller</dt>
        <dd>
          {person(order.seller)} @{order.seller.username}
        </dd>
        <dt>Total</dt>
        <dd>
          {money(order.total)} (fee {money(order.platformFee)}, seller earns {money(order.sellerEarning)})
        </dd>
        <dt>Due</dt>
        <dd>
          {when(order.dueAt)}
          {order.late && ' (late)'}
        </dd>
        <dt>Requirements</dt>
        <dd className="pre">{order.requirements || '—'}</dd>
      </dl>
      <h3>Timeline</h3>
      <ol className="timeline">
        {order.timeline.map((step) => (
          <li key={`${step.at}:${step.action}`}>
            {when(step.at)}: {step.action.replace(/_/g, ' ')} by {step.by} → <Badge value={step.status} />
            {step.reason && <q>{step.reason}</q>}
          </li>
        ))}
      </ol>
      {order.deliveries.length > 0 && (
        <>
          <h3>Deliveries</h3>
          <ul>
            {order.deliveries.map((delivery) => (
              <li key={delivery.id}>
                {when(delivery.createdAt)}: {delivery.message}
                <ul>
                  {delivery.files.map((file) => (
                    <li key={file.id}>
                      <a href={file.url}>{file.filename}</a> ({Math.round(file.size / 1024)} KB)
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ul>
        </>
      )}
      <Conversation order={order} />
      <OrderActions order={order} />
    </div>
  )
}

export function OrdersPage() {
  const [filters, setFilters] = useState<{ status?: (typeof statuses)[number]; buyerId?: string; sellerId?: string }>({ status: 'disputed' })
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['orders', filters, page], queryFn: () => call(api.GET('/api/v1/admin/orders', { params: { query: { ...filters, page, limit: 20 } } })) })
  const setFilter = (name: keyof typeof filters, value: string) => {
    setFilters((current) => ({ ...current, [name]: value === '' || (name !== 'status' && !uuid.test(value)) ? undefined : value }))
    setPage(1)
  }
  return (
    <>
      <h1>Orders and disputes</h1>
      <div className="filters">
        <Field label="Status">
          <select value={filters.status ?? ''} onChange={(event) => setFilter('status', event.target.value)}>
            <option value="">any</option>
            {statuses.map((value) => (
              <option key={value} value={value}>
                {value.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Buyer id">
          <input defaultValue={filters.buyerId} onChange={(event) => setFilter('buyerId', event.target.value.trim())} />
        </Field>
        <Field label="Seller id">
          <input defaultValue={filters.sellerId} onChange={(event) => setFilter('sellerId', event.target.value.trim())} />
        </Field>
      </div>
      <OrderList orders={list.data?.items} error={list.error} pending={list.isPending} />
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}

/** Orders, newest first, each opening onto its timeline and the actions staff may take. */
export function OrderList({ orders, error, pending }: { orders: Order[] | undefined; error: unknown; pending: boolean }) {
  return (
    <>
      <ErrorText error={error} />
      {pending && <Loading what="orders" />}
      {orders?.length === 0 && <p>No orders.</p>}
      <ul className="orders">
        {orders?.map((order) => (
          <OrderRow key={order.id} order={order} />
        ))}
      </ul>
    </>
  )
}
