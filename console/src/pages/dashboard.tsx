import { useQuery } from '@tanstack/react-query'
import { api, call } from '../api.ts'
import { ErrorText, Loading, money, Sparkline } from '../ui.tsx'

const words = (key: string) => key.replace(/([A-Z])/g, ' $1').replace(/(\d+)/g, ' $1').replace(/_/g, ' ').toLowerCase()

/** A figure as it reads: amounts (keys naming money) as currency, counts as numbers. */
function figure(key: string, value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value !== 'number') return JSON.stringify(value)
  if (/cents$/i.test(key)) return money(value / 100)
  if (/(amount|balance|volume|revenue|escrow|held|fees?)$/i.test(key)) return money(value)
  return value.toLocaleString('en')
}

function Series({ metric, title }: { metric: 'orders' | 'signups' | 'revenue'; title: string }) {
  const series = useQuery({ queryKey: ['series', metric], queryFn: () => call(api.GET('/api/v1/admin/stats/series', { params: { query: { metric, days: 30 } } })) })
  if (series.error) return <ErrorText error={series.error} />
  if (!series.data) return <Loading what={title} />
  return <Sparkline title={title} points={series.data.points} format={series.data.unit === 'cents' ? (value) => money(value / 100) : (value) => value.toLocaleString('en')} />
}

export function DashboardPage() {
  const stats = useQuery({ queryKey: ['stats'], queryFn: () => call(api.GET('/api/v1/admin/stats')) })
  return (
    <>
      <h1>Dashboard</h1>
      <section className="charts" aria-label="Last 30 days">
        <Series metric="orders" title="Orders placed" />
        <Series metric="signups" title="Sign-ups" />
        <Series metric="revenue" title="Platform revenue" />
      </section>
      <ErrorText error={stats.error} />
      {!stats.data && !stats.error && <Loading what="figures" />}
      <div className="cards">
        {stats.data &&
          Object.entries(stats.data as Record<string, Record<string, unknown>>).map(([section, figures]) => (
            <section key={section} className="card" aria-labelledby={`stats-${section}`}>
              <h2 id={`stats-${section}`}>{section === 'kyc' ? 'KYC' : section.charAt(0).toUpperCase() + section.slice(1)}</h2>
              <dl>
                {Object.entries(figures).map(([key, value]) =>
                  value !== null && typeof value === 'object' ? (
                    Object.entries(value as Record<string, unknown>).map(([inner, innerValue]) => (
                      <div key={`${key}.${inner}`}>
                        <dt>
                          {words(key)}: {words(inner)}
                        </dt>
                        <dd>{figure(inner, innerValue)}</dd>
                      </div>
                    ))
                  ) : (
                    <div key={key}>
                      <dt>{words(key)}</dt>
                      <dd>{figure(key, value)}</dd>
                    </div>
                  ),
                )}
              </dl>
            </section>
          ))}
      </div>
    </>
  )
}
