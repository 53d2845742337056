import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from '@tanstack/react-router'
import { useState, type ReactNode } from 'react'
import { api, call, type Ok } from '../api.ts'
import { useSession } from '../session.tsx'
import { AmountAction, Badge, ErrorText, Field, Loading, money, Pager, ReasonAction, useAction, when } from '../ui.tsx'

type Order = Ok<'/api/v1/admin/orders', 'get'>['items'][number]
type OrderRequest = Order['requests'][number]
const statuses = ['disputed', 'pending', 'in_progress', 'delivered', 'completed', 'cancelled'] as const
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** What an order's action changes besides the order: the lists and figures to read again. */
const moneyMoved = ['orders', 'wallet', 'stats', 'series']

/** What the order still holds in escrow: its total less what already went back to the buyer. */
const inEscrow = (order: Order) => Math.round((order.total - order.refunded) * 100) / 100

/**
 * A split resolution: part of the escrow back to the buyer, the rest to the seller less the fee on
 * it (`POST /admin/orders/{orderId}/resolve`). The API checks the amount against the escrow.
 */
function SplitAction({ order }: { order: Order }) {
  const orderId = order.id
  const [open, setOpen] = useState(false)
  const split = useAction(
    (body: { refundAmount: number; note: string }) => call(api.POST('/api/v1/admin/orders/{orderId}/resolve', { params: { path: { orderId } }, body })),
    moneyMoved,
  )
  return (
    <AmountAction
      open={open}
      label="Split the escrow"
      amountLabel={`Refund to the buyer (of ${money(inEscrow(order))} in escrow)`}
      max={inEscrow(order)}
      onOpen={() => setOpen(true)}
      onClose={() => setOpen(false)}
      onSubmit={(refundAmount, note) => split.mutate({ refundAmount, note })}
      error={split.error}
      busy={split.isPending}
    />
  )
}

/**
 * A staff refund of a completed order while the seller's earnings from it still clear
 * (`POST /admin/orders/{orderId}/refund`). Only the API knows how much is still clearing, so the
 * amount is not bounded here: above it, the API's message names the bound.
 */
function StaffRefundAction({ order }: { order: Order }) {
  const orderId = order.id
  const [open, setOpen] = useState(false)
  const refund = useAction((body: { amount: number; note: string }) => call(api.POST('/api/v1/admin/orders/{orderId}/refund', { params: { path: { orderId } }, body })), moneyMoved)
  return (
    <>
      <AmountAction
        open={open}
        label="Refund to the buyer"
        amountLabel="Amount back to the buyer, from the seller’s earnings still clearing"
        onOpen={() => {
          refund.reset()
          setOpen(true)
        }}
        onClose={() => setOpen(false)}
        onSubmit={(amount, note) => refund.mutate({ amount, note }, { onSuccess: () => setOpen(false) })}
        error={refund.error}
        busy={refund.isPending}
      />
      {refund.isSuccess && !open && <p role="status">Refunded {money(refund.variables.amount)} to the buyer.</p>}
    </>
  )
}

/** The staff actions the API lists in the order's `allowedActions` for the signed-in person: nothing it would refuse. */
function OrderActions({ order }: { order: Order }) {
  const { can } = useSession()
  const orderId = order.id
  const allowed = new Set(order.allowedActions.map((action) => action.action))
  const resolve = useAction(
    (outcome: { status: 'completed' | 'cancelled'; reason: string }) => call(api.PUT('/api/v1/orders/{orderId}/status', { params: { path: { orderId } }, body: outcome })),
    moneyMoved,
  )
  const cancel = useAction((reason: string) => call(api.POST('/api/v1/admin/orders/{orderId}/cancel', { params: { path: { orderId } }, body: { reason } })), moneyMoved)
  const resolutions = ['resolve_completed', 'resolve_cancelled', 'resolve_split'].filter((action) => allowed.has(action))
  return (
    <>
      {resolutions.length > 0 && (
        <div className="actions" role="group" aria-label="Resolve the dispute">
          {allowed.has('resolve_completed') && (
            <ReasonAction label="Pay the seller in full" busy={resolve.isPending} error={resolve.error} onSubmit={(reason) => resolve.mutate({ status: 'completed', reason })} />
          )}
          {allowed.has('resolve_cancelled') && (
            <ReasonAction label="Refund the buyer in full" busy={resolve.isPending} error={resolve.error} onSubmit={(reason) => resolve.mutate({ status: 'cancelled', reason })} />
          )}
          {allowed.has('resolve_split') && <SplitAction order={order} />}
        </div>
      )}
      {/* A staff member may also be a party of the order: its `cancel` is then theirs, not staff's. */}
      {allowed.has('cancel') && can('manage_orders') && (
        <div className="actions">
          <ReasonAction label="Cancel and refund" busy={cancel.isPending} error={cancel.error} onSubmit={(reason) => cancel.mutate(reason)} />
        </div>
      )}
      {allowed.has('staff_refund') && (
        <div className="actions" role="group" aria-label="Refund a completed order">
          <StaffRefundAction order={order} />
        </div>
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
        {open && (
          <>
            <p>
              <Link to="/orders/$orderId" params={{ orderId: order.id }}>
                The order’s page
              </Link>
            </p>
            <OrderDetails order={order} />
          </>
        )}
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

const requestKinds: Record<OrderRequest['type'], string> = { cancellation: 'Cancellation', extension: 'Extension', partial_refund: 'Partial refund' }

/** A request between the parties: what was asked, by whom, and what became of it. */
function RequestLine({ request }: { request: OrderRequest }) {
  const asked = request.type === 'extension' ? ` of ${request.days} days` : request.type === 'partial_refund' && request.amount !== null ? ` of ${money(request.amount)}` : ''
  return (
    <>
      {when(request.createdAt)}: {requestKinds[request.type]} request{asked} by the {request.requestedBy} <Badge value={request.status} />
      {request.status === 'open' ? `, to be answered by ${when(request.expiresAt)}` : request.respondedAt && `, ${request.status} ${when(request.respondedAt)}`}
      <q>{request.reason}</q>
    </>
  )
}

/** The order's moves and its parties' requests, oldest first. */
function Timeline({ order }: { order: Order }) {
  const entries: { at: string; key: string; node: ReactNode }[] = [
    ...order.timeline.map((step, index) => ({
      at: step.at,
      key: `move:${index}`,
      node: (
        <>
          {when(step.at)}: {step.action.replace(/_/g, ' ')} by {step.by} → <Badge value={step.status} />
          {step.reason && <q>{step.reason}</q>}
        </>
      ),
    })),
    // Requests come newest first: oldest first here, so that two made at the same instant keep their order.
    ...[...order.requests].reverse().map((request) => ({ at: request.createdAt, key: request.id, node: <RequestLine request={request} /> })),
  ]
  // ISO 8601 times in UTC sort as text; a move and a request at the same instant keep that order.
  entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
  return (
    <ol className="timeline" aria-label="Timeline">
      {entries.map((entry) => (
        <li key={entry.key}>{entry.node}</li>
      ))}
    </ol>
  )
}

function OrderFacts({ order }: { order: Order }) {
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
        {money(order.total)} (fee {money(order.platformFee)}, seller earns {money(order.sellerEarning)}){order.offerId && ', from a custom offer'}
      </dd>
      {order.refunded > 0 && (
        <>
          <dt>Refunded</dt>
          <dd>{money(order.refunded)} back to the buyer</dd>
        </>
      )}
      {order.tip !== null && (
        <>
          <dt>Tip</dt>
          <dd>{money(order.tip)}</dd>
        </>
      )}
      <dt>Due</dt>
      <dd>
        {when(order.dueAt)}
        {order.late && ' (late)'}
      </dd>
      {order.completedAt && (
        <>
          <dt>Completed</dt>
          <dd>{when(order.completedAt)}</dd>
        </>
      )}
      {order.cancelledAt && (
        <>
          <dt>Cancelled</dt>
          <dd>{when(order.cancelledAt)}</dd>
        </>
      )}
      <dt>Requirements</dt>
      <dd className="pre">{order.requirements || '—'}</dd>
    </dl>
  )
}

function OrderDetails({ order }: { order: Order }) {
  return (
    <div className="order-details">
      <OrderFacts order={order} />
      <h3>Timeline</h3>
      <Timeline order={order} />
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

/** `/orders/{orderId}`: one order, linked from statements and lists. */
export function OrderPage() {
  const params: { orderId?: string } = useParams({ strict: false })
  const orderId = params.orderId ?? ''
  const order = useQuery({ queryKey: ['orders', 'one', orderId], queryFn: () => call(api.GET('/api/v1/orders/{orderId}', { params: { path: { orderId } } })) })
  return (
    <>
      <p>
        <Link to="/orders">← Orders and disputes</Link>
      </p>
      <ErrorText error={order.error} />
      {order.isPending && <Loading what="the order" />}
      {order.data && (
        <>
          <h1>
            {order.data.serviceTitle} ({order.data.packageName})
          </h1>
          <p>
            <Badge value={order.data.status} /> {money(order.data.total)}, placed {when(order.data.createdAt)}
          </p>
          <OrderDetails order={order.data} />
        </>
      )}
    </>
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
function OrderList({ orders, error, pending }: { orders: Order[] | undefined; error: unknown; pending: boolean }) {
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

/** A user's purchases or sales, ten a page. */
export function OrdersOf({ filter, label }: { filter: { buyerId: string } | { sellerId: string }; label: string }) {
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['orders', filter, page], queryFn: () => call(api.GET('/api/v1/admin/orders', { params: { query: { ...filter, page, limit: 10 } } })) })
  return (
    <>
      <OrderList orders={list.data?.items} error={list.error} pending={list.isPending} />
      <Pager pagination={list.data?.pagination} onPage={setPage} label={label} />
    </>
  )
}
