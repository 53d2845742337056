import { useQuery } from '@tanstack/react-query'
import type { FormEvent } from 'react'
import { api, call, type Ok } from '../api.ts'
import { permissionLabels, type Permission } from '../session.tsx'
import { ConfirmAction, ErrorText, Field, Loading, useAction, when } from '../ui.tsx'

type Role = Ok<'/api/v1/admin/roles', 'get'>[number]
interface RoleFields {
  name: string
  permissions: Permission[]
}

const fieldsOf = (form: HTMLFormElement): RoleFields => {
  const data = new FormData(form)
  return { name: ((data.get('name') as string | null) ?? '').trim(), permissions: data.getAll('permissions') as Permission[] }
}

/** A role's name and its permissions, each a checkbox saying what it lets staff do. */
function RoleForm({ role, submitLabel, onSubmit, busy, error, done }: { role?: Role; submitLabel: string; onSubmit: (fields: RoleFields, form: HTMLFormElement) => void; busy: boolean; error: unknown; done?: string }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    onSubmit(fieldsOf(event.currentTarget), event.currentTarget)
  }
  return (
    <form onSubmit={submit} aria-label={role ? `Role ${role.name}` : 'New role'}>
      <Field label="Name">
        <input name="name" required minLength={2} maxLength={50} defaultValue={role?.name} />
      </Field>
      <fieldset>
        <legend>Permissions</legend>
        {(Object.keys(permissionLabels) as Permission[]).map((permission) => (
          <label key={permission} className="choice">
            <input type="checkbox" name="permissions" value={permission} defaultChecked={role?.permissions.includes(permission)} /> {permissionLabels[permission]}{' '}
            <span className="meta">({permission})</span>
          </label>
        ))}
      </fieldset>
      <div className="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        {done && <span role="status">{done}</span>}
      </div>
      <ErrorText error={error} />
    </form>
  )
}

function NewRole() {
  const create = useAction((body: RoleFields) => call(api.POST('/api/v1/admin/roles', { body })), ['roles'])
  return (
    <details className="card">
      <summary>New role</summary>
      <RoleForm submitLabel="Create the role" busy={create.isPending} error={create.error} done={create.data && `Created ${create.data.name}.`} onSubmit={(fields, form) => create.mutate(fields, { onSuccess: () => form.reset() })} />
    </details>
  )
}

function RoleCard({ role }: { role: Role }) {
  const path = { params: { path: { roleId: role.id } } }
  const save = useAction((body: RoleFields) => call(api.PUT('/api/v1/admin/roles/{roleId}', { ...path, body })), ['roles', 'users'])
  const remove = useAction(() => call(api.DELETE('/api/v1/admin/roles/{roleId}', path)), ['roles', 'users'])
  return (
    <section className="card" aria-labelledby={`role-${role.id}`}>
      <h2 id={`role-${role.id}`}>{role.name}</h2>
      <p>
        {role.permissions.length === 0 ? 'No permissions' : role.permissions.map((permission) => permissionLabels[permission as Permission] ?? permission).join('; ')}.{' '}
        <span className="meta">Changed {when(role.updatedAt)}.</span>
      </p>
      <details>
        <summary>Change</summary>
        <RoleForm role={role} submitLabel="Save" busy={save.isPending} error={save.error} done={save.isSuccess ? 'Saved.' : undefined} onSubmit={(fields) => save.mutate(fields)} />
      </details>
      <div className="actions">
        <ConfirmAction label="Delete the role" warning="Staff who hold it lose its permissions at once." busy={remove.isPending} error={remove.error} onConfirm={() => remove.mutate(undefined)} />
      </div>
    </section>
  )
}

/** `/roles` (superuser): the roles staff are given on their user pages. */
export function RolesPage() {
  const roles = useQuery({ queryKey: ['roles'], queryFn: () => call(api.GET('/api/v1/admin/roles')) })
  return (
    <>
      <h1>Staff roles</h1>
      <p>A role is a named set of permissions; a staff member has those of all their roles. Give roles to staff on their user pages.</p>
      <NewRole />
      <ErrorText error={roles.error} />
      {roles.isPending && <Loading what="roles" />}
      {roles.data?.length === 0 && <p>No roles yet.</p>}
      {roles.data?.map((role) => <RoleCard key={role.id} role={role} />)}
    </>
  )
}
