import { useQuery } from '@tanstack/react-query'
import { Link, useParams } from '@tanstack/react-router'
import { useState, type FormEvent } from 'react'
import { api, call } from '../api.ts'
import { Can, useSession } from '../session.tsx'
import { ActionButton, Badge, ConfirmAction, ErrorText, Field, Loading, Pager, ReasonAction, useAction, when } from '../ui.tsx'
import { AuditTable } from './audit.tsx'
import { OrdersOf } from './orders.tsx'
import { WalletSection } from './wallets.tsx'

const roles = ['client', 'staff', 'admin'] as const
const statuses = ['active', 'inactive', 'suspended'] as const

/** A new staff account with its first role (superuser). */
function CreateStaff() {
  const [open, setOpen] = useState(false)
  const roles = useQuery({ queryKey: ['roles'], queryFn: () => call(api.GET('/api/v1/admin/roles')), enabled: open })
  const create = useAction(
    (body: { fullName: string; username: string; email: string; password: string; roleId?: string }) => call(api.POST('/api/v1/admin/staff', { body })),
    ['users'],
  )
  if (!open) return <ActionButton label="New staff account…" onClick={() => setOpen(true)} />
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    const text = (name: string) => ((form.get(name) as string | null) ?? '').trim()
    create.mutate({ fullName: text('fullName'), username: text('username'), email: text('email'), password: (form.get('password') as string | null) ?? '', ...(text('roleId') && { roleId: text('roleId') }) })
  }
  return (
    <form className="card" onSubmit={submit} aria-label="New staff account">
      <div className="filters">
        <Field label="Full name">
          <input name="fullName" required maxLength={100} />
        </Field>
        <Field label="Username">
          <input name="username" required maxLength={30} />
        </Field>
        <Field label="E-mail">
          <input name="email" type="email" required />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="new-password" required minLength={8} />
        </Field>
        <Field label="Role">
          <select name="roleId">
            <option value="">none</option>
            {roles.data?.map((role) => (
              <option key={role.id} value={role.id}>
                {role.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <button type="submit" disabled={create.isPending}>
        Create
      </button>{' '}
      <button type="button" onClick={() => setOpen(false)}>
        Close
      </button>
      {create.data && <p role="status">Created {create.data.email}.</p>}
      <ErrorText error={create.error} />
    </form>
  )
}

export function UsersPage() {
  const [filters, setFilters] = useState<{ search?: string; role?: (typeof roles)[number]; status?: (typeof statuses)[number] }>({})
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['users', filters, page], queryFn: () => call(api.GET('/api/v1/admin/users', { params: { query: { ...filters, page, limit: 25 } } })) })
  const setFilter = (name: keyof typeof filters, value: string) => {
    setFilters((current) => ({ ...current, [name]: value.trim() === '' ? undefined : value.trim() }))
    setPage(1)
  }
  return (
    <>
      <h1>Users</h1>
      <Can permission="superuser">
        <CreateStaff />
      </Can>
      <form className="filters" role="search" onSubmit={(event) => event.preventDefault()}>
        <Field label="Search">
          <input type="search" placeholder="E-mail, username or name" maxLength={100} onChange={(event) => setFilter('search', event.target.value)} />
        </Field>
        <Field label="Role">
          <select onChange={(event) => setFilter('role', event.target.value)}>
            <option value="">any</option>
            {roles.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select onChange={(event) => setFilter('status', event.target.value)}>
            <option value="">any</option>
            {statuses.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </Field>
      </form>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="users" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Services</th>
              <th scope="col">Joined</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={6}>No users match.</td>
              </tr>
            )}
            {list.data.items.map((user) => (
              <tr key={user.id}>
                <td>
                  <Link to="/users/$userId" params={{ userId: user.id }}>
                    {user.fullName}
                  </Link>{' '}
                  <span className="meta">@{user.username}</span>
                </td>
                <td>{user.email}</td>
                <td>{user.role}</td>
                <td>
                  <Badge value={user.status} />
                </td>
                <td>{user.servicesCount}</td>
                <td>{when(user.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}

/** A staff member's roles, replaced at once (superuser). */
function RolesEditor({ userId, current }: { userId: string; current: string[] }) {
  const roles = useQuery({ queryKey: ['roles'], queryFn: () => call(api.GET('/api/v1/admin/roles')) })
  const [chosen, setChosen] = useState(new Set(current))
  const save = useAction(() => call(api.PUT('/api/v1/admin/staff/{userId}/roles', { params: { path: { userId } }, body: { roleIds: [...chosen] } })), ['users', 'audit'])
  if (roles.error) return <ErrorText error={roles.error} />
  if (!roles.data) return <Loading what="roles" />
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault()
        save.mutate(undefined)
      }}
    >
      <fieldset>
        <legend>Roles</legend>
        {roles.data.map((role) => (
          <label key={role.id} className="choice">
            <input
              type="checkbox"
              checked={chosen.has(role.id)}
              onChange={(event) =>
                setChosen((before) => {
                  const after = new Set(before)
                  if (event.target.checked) after.add(role.id)
                  else after.delete(role.id)
                  return after
                })
              }
            />{' '}
            {role.name} <span className="meta">({role.permissions.join(', ') || 'no permissions'})</span>
          </label>
        ))}
        {roles.data.length === 0 && <p>No roles yet.</p>}
        <button type="submit" disabled={save.isPending}>
          Save roles
        </button>
        {save.isSuccess && <span role="status"> Saved.</span>}
        <ErrorText error={save.error} />
      </fieldset>
    </form>
  )
}

/** Every KYC submission of the person, page by page, each opening the submission's page with its documents. */
function KycHistory({ userId }: { userId: string }) {
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['kyc', 'of', userId, page], queryFn: () => call(api.GET('/api/v1/admin/kyc', { params: { query: { userId, page, limit: 10 } } })) })
  if (list.error) return <ErrorText error={list.error} />
  if (!list.data) return <Loading what="KYC submissions" />
  if (list.data.items.length === 0) return <p>No KYC submission.</p>
  return (
    <>
      <table>
        <thead>
          <tr>
            <th scope="col">Submitted</th>
            <th scope="col">Document</th>
            <th scope="col">Status</th>
            <th scope="col">Reviewed</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {list.data.items.map((submission) => (
            <tr key={submission.id}>
              <td>
                <Link to="/kyc/$submissionId" params={{ submissionId: submission.id }}>
                  {when(submission.submittedAt ?? submission.createdAt)}
                </Link>
              </td>
              <td>{submission.documentType?.replace(/_/g, ' ') ?? '—'}</td>
              <td>
                <Badge value={submission.status} />
              </td>
              <td>{when(submission.reviewedAt)}</td>
              <td>{submission.rejectionReason ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager pagination={list.data.pagination} onPage={setPage} label="KYC submissions" />
    </>
  )
}

export function UserPage() {
  const params: { userId?: string } = useParams({ strict: false })
  const userId = params.userId ?? ''
  const { me } = useSession()
  const path = { params: { path: { userId } } }
  const user = useQuery({ queryKey: ['users', userId], queryFn: () => call(api.GET('/api/v1/admin/users/{userId}', path)) })
  const suspend = useAction((reason: string) => call(api.POST('/api/v1/admin/users/{userId}/suspend', { ...path, body: { reason } })), ['users', 'audit'])
  const unsuspend = useAction(() => call(api.POST('/api/v1/admin/users/{userId}/unsuspend', path)), ['users', 'audit'])
  const deactivate = useAction(() => call(api.POST('/api/v1/admin/users/{userId}/deactivate', path)), ['users', 'audit'])
  const reactivate = useAction(() => call(api.POST('/api/v1/admin/users/{userId}/reactivate', path)), ['users', 'audit'])
  if (user.error) return <ErrorText error={user.error} />
  if (!user.data) return <Loading what="the user" />
  const person = user.data
  // Staff accounts are a superuser's to act on; nobody acts on their own.
  const mayManage = person.id !== me.id && (!(person.isStaff || person.isSuperuser) || me.isSuperuser)
  return (
    <>
      <p>
        <Link to="/users">← Users</Link>
      </p>
      <h1>{person.fullName}</h1>
      <p>
        <Badge value={person.status} /> @{person.username}, {person.role}
      </p>
      <div className="profile">
        {person.avatar && <img className="avatar" src={person.avatar} alt={`${person.fullName}’s avatar`} />}
        <div>
          {person.title && <p className="profile-title">{person.title}</p>}
          {person.description && <p className="pre">{person.description}</p>}
        </div>
      </div>
      <dl className="facts">
        <dt>E-mail</dt>
        <dd>{person.email}</dd>
        <dt>Phone</dt>
        <dd>{person.phone ?? '—'}</dd>
        <dt>Identity (KYC)</dt>
        <dd>{person.isKYCVerified ? 'verified' : 'not verified'}</dd>
        <dt>Joined</dt>
        <dd>{when(person.createdAt)}</dd>
        <dt>Last sign-in</dt>
        <dd>{when(person.lastLogin)}</dd>
        <dt>Services</dt>
        <dd>{person.servicesCount}</dd>
        {person.suspendedAt && (
          <>
            <dt>Suspended</dt>
            <dd>
              {when(person.suspendedAt)}: {person.suspensionReason}
            </dd>
          </>
        )}
      </dl>
      {mayManage && (
        <Can permission="manage_users">
          <div className="actions">
            {person.suspendedAt ? (
              <ActionButton label="Lift the suspension" busy={unsuspend.isPending} onClick={() => unsuspend.mutate(undefined)} />
            ) : (
              <ReasonAction label="Suspend" busy={suspend.isPending} error={suspend.error} onSubmit={(reason) => suspend.mutate(reason)} />
            )}
            {person.isActive ? (
              <ConfirmAction
                label="Deactivate"
                warning="The account stops working at once, and its sessions end; reactivating it restores it."
                busy={deactivate.isPending}
                error={deactivate.error}
                onConfirm={() => deactivate.mutate(undefined)}
              />
            ) : (
              <ActionButton label="Reactivate" busy={reactivate.isPending} onClick={() => reactivate.mutate(undefined)} />
            )}
          </div>
          <ErrorText error={unsuspend.error ?? reactivate.error} />
        </Can>
      )}
      {person.isStaff && !person.isSuperuser && (
        <>
          <h2>Staff roles</h2>
          {person.roles.length > 0 ? <p>{person.roles.map((role) => role.name).join(', ')}</p> : <p>No roles: this staff member can see the dashboard only.</p>}
          {me.isSuperuser && <RolesEditor key={person.roles.map((role) => role.id).join()} userId={person.id} current={person.roles.map((role) => role.id)} />}
        </>
      )}
      <Can permission="view_kyc">
        <h2>KYC</h2>
        <KycHistory userId={userId} />
      </Can>
      <Can permission="view_accounts">
        <h2>Wallet</h2>
        <WalletSection userId={userId} />
      </Can>
      <Can permission="view_orders">
        <h2>Purchases</h2>
        <OrdersOf filter={{ buyerId: userId }} label="purchases" />
        <h2>Sales</h2>
        <OrdersOf filter={{ sellerId: userId }} label="sales" />
      </Can>
      <Can permission="superuser">
        <h2>Audit trail</h2>
        <AuditTable filters={{ target: userId }} />
      </Can>
    </>
  )
}
