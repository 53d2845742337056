import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from '@tanstack/react-router'
import { useState } from 'react'
import { api, call } from '../api.ts'
import { Can, useSession } from '../session.tsx'
import { AmountAction, ErrorText, Field, Loading, money, Pager, useAction, when } from '../ui.tsx'

const accounts = ['available', 'clearing'] as const

/** The balances the user sees at `GET /wallet`. */
function Balances({ userId }: { userId: string }) {
  const wallet = useQuery({ queryKey: ['wallet', userId], queryFn: () => call(api.GET('/api/v1/admin/wallets/{userId}', { params: { path: { userId } } })) })
  if (wallet.error) return <ErrorText error={wallet.error} />
  if (!wallet.data) return <Loading what="the wallet" />
  const { balance, escrow, clearing, nextClearingAt, pendingPayouts, currency } = wallet.data
  return (
    <dl className="facts" aria-label="Balances">
      <dt>Available</dt>
      <dd>{money(balance, currency)}</dd>
      <dt>In escrow</dt>
      <dd>{money(escrow, currency)}</dd>
      <dt>Clearing</dt>
      <dd>
        {money(clearing, currency)}
        {nextClearingAt && <>, the next earning becomes available {when(nextClearingAt)}</>}
      </dd>
      <dt>Payouts waiting</dt>
      <dd>{money(pendingPayouts, currency)}</dd>
    </dl>
  )
}

/** The user's statement as they see it, newest first, one balance or both, page by page. */
function Statement({ userId }: { userId: string }) {
  const { can } = useSession()
  const [account, setAccount] = useState<(typeof accounts)[number] | undefined>(undefined)
  const [page, setPage] = useState(1)
  const list = useQuery({
    queryKey: ['wallet', userId, 'statement', account, page],
    queryFn: () => call(api.GET('/api/v1/admin/wallets/{userId}/transactions', { params: { path: { userId }, query: { page, limit: 20, ...(account && { account }) } } })),
  })
  return (
    <section aria-labelledby={`statement-${userId}`}>
      <h3 id={`statement-${userId}`}>Statement</h3>
      <div className="filters">
        <Field label="Balance">
          <select
            value={account ?? ''}
            onChange={(event) => {
              setAccount((event.target.value || undefined) as typeof account)
              setPage(1)
            }}
          >
            <option value="">available and clearing</option>
            {accounts.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="the statement" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Movement</th>
              <th scope="col">Balance</th>
              <th scope="col" className="amount">
                Amount
              </th>
              <th scope="col" className="amount">
                After
              </th>
              <th scope="col">Description</th>
              <th scope="col">Available</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={7}>No movements.</td>
              </tr>
            )}
            {list.data.items.map((line) => (
              <tr key={`${line.id}:${line.account}`}>
                <td>{when(line.createdAt)}</td>
                <td>{line.type.replace(/_/g, ' ')}</td>
                <td>{line.account}</td>
                <td className="amount">{money(line.amount)}</td>
                <td className="amount">{money(line.balanceAfter)}</td>
                <td>
                  {line.orderId && can('view_orders') ? (
                    <Link to="/orders/$orderId" params={{ orderId: line.orderId }}>
                      {line.description}
                    </Link>
                  ) : (
                    line.description
                  )}
                </td>
                <td>{line.availableAt ? when(line.availableAt) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} label="the statement" />
    </section>
  )
}

/** A superuser's correction of the available balance: an `adjustment` line whose description is the reason. */
function Adjustment({ userId }: { userId: string }) {
  const [open, setOpen] = useState(false)
  const adjust = useAction(
    (body: { amount: number; reason: string }) => call(api.POST('/api/v1/admin/wallets/{userId}/adjustments', { params: { path: { userId } }, body })),
    ['wallet', 'stats', 'audit'],
  )
  return (
    <div className="actions">
      <AmountAction
        open={open}
        label="Adjust the balance"
        amountLabel="Amount (negative to debit)"
        noteLabel="Reason"
        noteMax={500}
        min={-1_000_000}
        onOpen={() => {
          adjust.reset()
          setOpen(true)
        }}
        onClose={() => setOpen(false)}
        onSubmit={(amount, reason) => adjust.mutate({ amount, reason }, { onSuccess: () => setOpen(false) })}
        error={adjust.error}
        busy={adjust.isPending}
      />
      {adjust.isSuccess && !open && <p role="status">Adjusted by {money(adjust.variables.amount)}.</p>}
    </div>
  )
}

/** A user's money for staff with view_accounts: balances, corrections (superuser), then the statement. */
export function WalletSection({ userId }: { userId: string }) {
  return (
    <>
      <Balances userId={userId} />
      <Can permission="superuser">
        <Adjustment userId={userId} />
      </Can>
      <Statement userId={userId} />
    </>
  )
}

/** `/wallets/{userId}`: a wallet and its statement, reached from the payouts queue (view_accounts alone opens it). */
export function WalletPage() {
  const params: { userId?: string } = useParams({ strict: false })
  const userId = params.userId ?? ''
  const { can } = useSession()
  const user = useQuery({ queryKey: ['users', userId], queryFn: () => call(api.GET('/api/v1/admin/users/{userId}', { params: { path: { userId } } })), enabled: can('view_users') })
  const name = user.data?.fullName ?? `user …${userId.slice(-8)}`
  return (
    <>
      <p>
        <Link to="/payouts">← Payouts</Link>
      </p>
      <h1>Wallet of {name}</h1>
      {can('view_users') && (
        <p>
          <Link to="/users/$userId" params={{ userId }}>
            {user.data ? `${user.data.fullName}’s page` : 'The user’s page'}
          </Link>
        </p>
      )}
      <WalletSection userId={userId} />
    </>
  )
}
