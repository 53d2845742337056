import { useQuery } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { useState } from 'react'
import { api, call, type Ok } from '../api.ts'
import { Can, useSession } from '../session.tsx'
import { ActionButton, Badge, ErrorText, Field, Loading, money, Pager, ReasonAction, useAction, when } from '../ui.tsx'

type Payout = Ok<'/api/v1/admin/payouts', 'get'>['items'][number]
const statuses = ['pending', 'processed', 'rejected', 'cancelled'] as const

function PayoutActions({ payout }: { payout: Payout }) {
  const path = { params: { path: { payoutId: payout.id } } }
  const approve = useAction(() => call(api.POST('/api/v1/admin/payouts/{payoutId}/approve', path)), ['payouts', 'wallet', 'stats'])
  const reject = useAction((reason: string) => call(api.POST('/api/v1/admin/payouts/{payoutId}/reject', { ...path, body: { reason } })), ['payouts', 'wallet', 'stats'])
  if (payout.status !== 'pending') return <>{payout.rejectionReason ?? when(payout.decidedAt)}</>
  return (
    <Can permission="approve_withdrawals">
      <div className="actions">
        <ActionButton label="Approve" busy={approve.isPending} onClick={() => approve.mutate(undefined)} />
        <ReasonAction label="Reject" busy={reject.isPending} error={reject.error} onSubmit={(reason) => reject.mutate(reason)} />
      </div>
      <ErrorText error={approve.error} />
    </Can>
  )
}

/** The ledger's own check: every transaction sums to zero and every balance matches its entries. */
function Reconciliation() {
  const [asked, setAsked] = useState(false)
  const check = useQuery({ queryKey: ['ledger-check'], queryFn: () => call(api.GET('/api/v1/admin/ledger/check')), enabled: asked })
  return (
    <section aria-labelledby="reconciliation">
      <h2 id="reconciliation">Reconciliation</h2>
      <ActionButton label={asked ? 'Check again' : 'Check the ledger'} busy={check.isFetching} onClick={() => (asked ? void check.refetch() : setAsked(true))} />
      <ErrorText error={check.error} />
      {check.data && (
        <>
          <p role="status">
            {check.data.ok ? 'The books balance' : `${check.data.problems.length} problems`}: {check.data.transactions} transactions, {check.data.accounts} accounts checked.
          </p>
          {check.data.problems.length > 0 && (
            <ul>
              {check.data.problems.map((problem) => (
                <li key={`${problem.kind}:${problem.id}`}>
                  {problem.kind} {problem.id}: {problem.message}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </section>
  )
}

export function PayoutsPage() {
  const { can } = useSession()
  const [status, setStatus] = useState<(typeof statuses)[number]>('pending')
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['payouts', status, page], queryFn: () => call(api.GET('/api/v1/admin/payouts', { params: { query: { status, page, limit: 20 } } })) })
  return (
    <>
      <h1>Payouts</h1>
      <div className="filters">
        <Field label="Status">
          <select
            value={status}
            onChange={(event) => {
              setStatus(event.target.value as typeof status)
              setPage(1)
            }}
          >
            {statuses.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="payouts" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Requested</th>
              <th scope="col">User</th>
              <th scope="col">Amount</th>
              <th scope="col">Method</th>
              <th scope="col">Status</th>
              <th scope="col">Decision</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={6}>No {status} payouts.</td>
              </tr>
            )}
            {list.data.items.map((payout) => (
              <tr key={payout.id}>
                <td>{when(payout.createdAt)}</td>
                <td>
                  {can('view_users') ? (
                    <Link to="/users/$userId" params={{ userId: payout.userId }}>
                      {payout.user.fullName}
                    </Link>
                  ) : (
                    payout.user.fullName
                  )}{' '}
                  <span className="meta">@{payout.user.username}</span>{' '}
                  <Link to="/wallets/$userId" params={{ userId: payout.userId }} aria-label={`Wallet and statement of ${payout.user.fullName}`}>
                    wallet and statement
                  </Link>
                </td>
                <td>{money(payout.amount, payout.currency)}</td>
                <td>
                  {payout.method.replace(/_/g, ' ')}: {Object.values(payout.details).join(', ')}
                </td>
                <td>
                  <Badge value={payout.status} />
                </td>
                <td>
                  <PayoutActions payout={payout} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
      <Can permission="superuser">
        <Reconciliation />
      </Can>
    </>
  )
}
