import { useQuery } from '@tanstack/react-query'
import { Link } from '@tanstack/react-router'
import { useState } from 'react'
import { api, call } from '../api.ts'
import { useSession } from '../session.tsx'
import { ErrorText, Field, Loading, Pager, when } from '../ui.tsx'

interface AuditFilters {
  actor?: string
  target?: string
  targetType?: string
  action?: string
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const patterns: Record<keyof AuditFilters, RegExp> = { actor: uuid, target: uuid, targetType: /^[a-z_]{1,40}$/, action: /^[a-z_]{1,40}\.[a-z_]{1,40}$/ }

/**
 * An id in the log, shortened for reading (the whole id in its title), and a link to the
 * console's page of that record where there is one the signed-in person may open.
 */
function Ref({ type, id }: { type: string; id: string }) {
  const { can } = useSession()
  const tail = `…${id.slice(-8)}`
  const short = <code title={id}>{tail}</code>
  // The accessible name holds the visible text (WCAG 2.5.3), with what the id is of.
  const label = `${type.replace(/_/g, ' ')} ${tail}`
  if (type === 'user' && can('view_users')) return <Link to="/users/$userId" params={{ userId: id }} aria-label={label}>{short}</Link>
  if (type === 'order' && can('view_orders')) return <Link to="/orders/$orderId" params={{ orderId: id }} aria-label={label}>{short}</Link>
  if (type === 'kyc_submission' && can('view_kyc')) return <Link to="/kyc/$submissionId" params={{ submissionId: id }} aria-label={label}>{short}</Link>
  return short
}

/** Staff actions, newest first, with what changed. */
export function AuditTable({ filters }: { filters: AuditFilters }) {
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['audit', filters, page], queryFn: () => call(api.GET('/api/v1/admin/audit', { params: { query: { ...filters, page, limit: 25 } } })) })
  return (
    <>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="the audit log" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">By</th>
              <th scope="col">Reason</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={6}>Nothing recorded.</td>
              </tr>
            )}
            {list.data.items.map((entry) => (
              <tr key={entry.id}>
                <td>{when(entry.createdAt)}</td>
                <td>{entry.action}</td>
                <td>
                  {entry.targetType} <Ref type={entry.targetType} id={entry.targetId} />
                </td>
                <td>{entry.actorId ? <Ref type="user" id={entry.actorId} /> : 'system'}</td>
                <td>{entry.reason ?? '—'}</td>
                <td>
                  <details>
                    <summary>Before and after</summary>
                    <pre>{JSON.stringify({ before: entry.before, after: entry.after }, null, 1)}</pre>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}

export function AuditPage() {
  const [filters, setFilters] = useState<AuditFilters>({})
  const field = (name: keyof AuditFilters, label: string, placeholder: string) => (
    <Field label={label}>
      <input
        placeholder={placeholder}
        onChange={(event) => {
          const value = event.target.value.trim()
          setFilters((current) => ({ ...current, [name]: patterns[name].test(value) ? value : undefined }))
        }}
      />
    </Field>
  )
  return (
    <>
      <h1>Audit log</h1>
      <div className="filters">
        {field('action', 'Action', 'user.suspend')}
        {field('targetType', 'Target type', 'user')}
        {field('target', 'Target id', 'an id')}
        {field('actor', 'Staff member id', 'an id')}
      </div>
      <AuditTable filters={filters} />
    </>
  )
}
