import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { createRootRoute, createRoute, createRouter, Link, Outlet, RouterProvider } from '@tanstack/react-router'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { AuditPage } from './pages/audit.tsx'
import { DashboardPage } from './pages/dashboard.tsx'
import { KycPage, KycSubmissionPage } from './pages/kyc.tsx'
import { ModerationPage } from './pages/moderation.tsx'
import { OrderPage, OrdersPage } from './pages/orders.tsx'
import { PayoutsPage } from './pages/payouts.tsx'
import { RolesPage } from './pages/roles.tsx'
import { UserPage, UsersPage } from './pages/users.tsx'
import { WalletPage } from './pages/wallets.tsx'
import { EventsPage, WebhooksPage } from './pages/webhooks.tsx'
import { SessionGate, useSession, type Permission } from './session.tsx'
import './styles.css'

const sections: { to: string; label: string; permission?: Permission | 'superuser' }[] = [
  { to: '/', label: 'Dashboard' },
  { to: '/moderation', label: 'Moderation', permission: 'view_services' },
  { to: '/kyc', label: 'KYC', permission: 'view_kyc' },
  { to: '/payouts', label: 'Payouts', permission: 'view_accounts' },
  { to: '/users', label: 'Users', permission: 'view_users' },
  { to: '/orders', label: 'Orders and disputes', permission: 'view_orders' },
  { to: '/roles', label: 'Staff roles', permission: 'superuser' },
  { to: '/webhooks', label: 'Webhooks', permission: 'superuser' },
  { to: '/events', label: 'Events', permission: 'superuser' },
  { to: '/audit', label: 'Audit log', permission: 'superuser' },
]

function Layout() {
  const { me, can, signOut } = useSession()
  return (
    <div className="layout">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span className="brand">Marketplace console</span>
        <nav aria-label="Sections">
          <ul>
            {sections
              .filter((section) => !section.permission || can(section.permission))
              .map((section) => (
                <li key={section.to}>
                  <Link to={section.to} activeOptions={{ exact: section.to === '/' }} activeProps={{ 'aria-current': 'page' }}>
                    {section.label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <span className="who">
          {me.fullName} ({me.email})
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  )
}

const root = createRootRoute({ component: Layout })
const page = (path: string, component: () => React.ReactNode) => createRoute({ getParentRoute: () => root, path, component })
const routeTree = root.addChildren([
  page('/', DashboardPage),
  page('/moderation', ModerationPage),
  page('/kyc', KycPage),
  page('/kyc/$submissionId', KycSubmissionPage),
  page('/payouts', PayoutsPage),
  page('/wallets/$userId', WalletPage),
  page('/users', UsersPage),
  page('/users/$userId', UserPage),
  page('/orders', OrdersPage),
  page('/orders/$orderId', OrderPage),
  page('/roles', RolesPage),
  page('/webhooks', WebhooksPage),
  page('/events', EventsPage),
  page('/audit', AuditPage),
])
const router = createRouter({ routeTree, basepath: '/console' })

const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 10_000 } } })

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <SessionGate>
        <RouterProvider router={router} />
      </SessionGate>
    </QueryClientProvider>
  </StrictMode>,
)
