import { useQuery, useQueryClient } from '@tanstack/react-query'
import { createContext, useContext, useEffect, useState, type FormEvent, type ReactNode } from 'react'
import { api, call, endSession, hasRefreshToken, onSessionEnd, refreshSession, startSession, type Ok, type paths } from './api.ts'
import { ErrorText } from './ui.tsx'

type Me = Ok<'/api/v1/users/me', 'get'>
export type Permission = NonNullable<paths['/api/v1/admin/roles']['post']['requestBody']>['content']['application/json']['permissions'][number]

/** What each permission lets staff do; the compiler holds the list to the API's. */
export const permissionLabels: Record<Permission, string> = {
  view_users: 'see users',
  manage_users: 'suspend, deactivate and reactivate users',
  view_services: 'see services for moderation',
  approve_services: 'approve and reject services',
  view_orders: 'see orders and their conversations',
  manage_orders: 'cancel orders and refund completed ones',
  resolve_disputes: 'resolve disputes',
  view_kyc: 'see KYC submissions and their documents',
  manage_kyc: 'approve and reject KYC submissions',
  view_accounts: 'see payouts, wallets and statements',
  approve_withdrawals: 'approve and reject payouts',
}

interface Session {
  me: Me
  /** Whether the signed-in person may do this: a superuser may do everything. */
  can: (permission: Permission | 'superuser') => boolean
  signOut: () => Promise<void>
}

const SessionContext = createContext<Session | undefined>(undefined)

export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside the signed-in console')
  return session
}

/** Shows its children when it is there, nothing otherwise: a button that would be refused is not shown. */
export function Can({ permission, children }: { permission: Permission | 'superuser'; children: ReactNode }) {
  return useSession().can(permission) ? <>{children}</> : null
}

/** The sign-in page until someone staff is signed in, then the console. */
export function SessionGate({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient()
  const [signedIn, setSignedIn] = useState<boolean | undefined>(hasRefreshToken() ? undefined : false)
  const [ended, setEnded] = useState(false)

  useEffect(() => {
    if (signedIn === undefined) void refreshSession().then(setSignedIn)
  }, [signedIn])
  useEffect(
    () =>
      onSessionEnd(() => {
        queryClient.clear()
        setSignedIn((was) => {
          if (was) setEnded(true)
          return false
        })
      }),
    [queryClient],
  )

  const me = useQuery({ queryKey: ['me'], queryFn: () => call(api.GET('/api/v1/users/me')), enabled: signedIn === true, staleTime: 60_000 })

  if (signedIn === undefined || (signedIn && me.isPending)) return <p className="centered">Loading…</p>
  if (!signedIn || !me.data) {
    return (
      <SignIn
        notice={ended ? 'Your session has ended. Sign in again.' : undefined}
        onSignedIn={() => {
          setEnded(false)
          setSignedIn(true)
        }}
      />
    )
  }
  const person = me.data
  if (!person.isStaff && !person.isSuperuser) {
    return (
      <main className="centered">
        <p role="alert">This account is not staff: the console is for the marketplace&apos;s team.</p>
        <button type="button" onClick={() => endSession()}>
          Sign out
        </button>
      </main>
    )
  }
  const session: Session = {
    me: person,
    can: (permission) => person.isSuperuser || (permission !== 'superuser' && (person.permissions as string[]).includes(permission)),
    async signOut() {
      const refreshToken = sessionStorage.getItem('console.refreshToken') ?? undefined
      await api.POST('/api/v1/auth/logout', { body: refreshToken ? { refreshToken } : {} }).catch(() => undefined)
      endSession()
      setEnded(false)
    },
  }
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>
}

function SignIn({ notice, onSignedIn }: { notice?: string; onSignedIn: () => void }) {
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    setBusy(true)
    setError(undefined)
    try {
      const text = (name: string) => (form.get(name) as string | null) ?? ''
      const tokens = await call(api.POST('/api/v1/auth/login', { body: { email: text('email'), password: text('password') } }))
      startSession(tokens)
      onSignedIn()
    } catch (caught) {
      setError(caught)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main className="sign-in">
      <h1>Marketplace console</h1>
      {notice && <p role="status" className="notice">{notice}</p>}
      <form onSubmit={(event) => void submit(event)}>
        <label>
          E-mail
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <ErrorText error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  )
}
