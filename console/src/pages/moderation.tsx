import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { api, call, type Ok } from '../api.ts'
import { Can } from '../session.tsx'
import { ActionButton, Badge, ErrorText, Field, Loading, money, Pager, ReasonAction, useAction, when } from '../ui.tsx'

type Service = Ok<'/api/v1/admin/services', 'get'>['items'][number]
const statuses = ['pending', 'active', 'rejected', 'paused'] as const

/** A service as a buyer would see it, with the moderator's decision. */
function ServiceCard({ service }: { service: Service }) {
  const approve = useAction(() => call(api.POST('/api/v1/admin/services/{serviceId}/approve', { params: { path: { serviceId: service.id } } })), ['services', 'stats'])
  const reject = useAction((reason: string) => call(api.POST('/api/v1/admin/services/{serviceId}/reject', { params: { path: { serviceId: service.id } }, body: { reason } })), ['services', 'stats'])
  return (
    <article className="card service" aria-labelledby={`service-${service.id}`}>
      <h2 id={`service-${service.id}`}>{service.title}</h2>
      <p className="meta">
        <Badge value={service.status} /> by {service.seller.fullName ?? service.seller.username} in {service.category.name}, updated {when(service.updatedAt)}
      </p>
      <p>{service.shortDescription}</p>
      {service.images.length > 0 && (
        <div className="gallery">
          {service.images.map((image, index) => (
            <img key={image.id} src={image.url} alt={`${service.title}, image ${index + 1}`} loading="lazy" />
          ))}
        </div>
      )}
      <details>
        <summary>Description and packages</summary>
        <p className="pre">{service.description}</p>
        <table>
          <thead>
            <tr>
              <th scope="col">Package</th>
              <th scope="col">Price</th>
              <th scope="col">Delivery</th>
              <th scope="col">Revisions</th>
              <th scope="col">Includes</th>
            </tr>
          </thead>
          <tbody>
            {service.packages.map((pack) => (
              <tr key={pack.id}>
                <th scope="row">{pack.name}</th>
                <td>{money(pack.price)}</td>
                <td>{pack.deliveryDays} days</td>
                <td>{pack.revisions}</td>
                <td>{pack.features.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      {service.rejectionReason && <p>Rejected: {service.rejectionReason}</p>}
      {service.status === 'pending' && (
        <Can permission="approve_services">
          <div className="actions">
            <ActionButton label="Approve" busy={approve.isPending} onClick={() => approve.mutate(undefined)} />
            <ReasonAction label="Reject" busy={reject.isPending} error={reject.error} onSubmit={(reason) => reject.mutate(reason)} />
          </div>
          <ErrorText error={approve.error} />
        </Can>
      )}
    </article>
  )
}

export function ModerationPage() {
  const [status, setStatus] = useState<(typeof statuses)[number]>('pending')
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['services', status, page], queryFn: () => call(api.GET('/api/v1/admin/services', { params: { query: { status, page, limit: 10 } } })) })
  return (
    <>
      <h1>Moderation</h1>
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
      {list.isPending && <Loading what="services" />}
      {list.data?.items.length === 0 && <p>No {status} services.</p>}
      {list.data?.items.map((service) => <ServiceCard key={service.id} service={service} />)}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}
