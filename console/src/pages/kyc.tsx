import { useQuery } from '@tanstack/react-query'
import { Link, useNavigate, useParams } from '@tanstack/react-router'
import { useState } from 'react'
import { api, call } from '../api.ts'
import { Can, useSession } from '../session.tsx'
import { ActionButton, Badge, ErrorText, Field, Loading, Pager, ReasonAction, useAction, when } from '../ui.tsx'

const statuses = ['pending_review', 'pending_documents', 'approved', 'rejected'] as const

export function KycPage() {
  const [status, setStatus] = useState<(typeof statuses)[number]>('pending_review')
  const [page, setPage] = useState(1)
  const list = useQuery({ queryKey: ['kyc', status, page], queryFn: () => call(api.GET('/api/v1/admin/kyc', { params: { query: { status, page, limit: 20 } } })) })
  return (
    <>
      <h1>KYC</h1>
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
              <option key={value} value={value}>
                {value.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorText error={list.error} />
      {list.isPending && <Loading what="submissions" />}
      {list.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Document</th>
              <th scope="col">Status</th>
              <th scope="col">Submitted</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.length === 0 && (
              <tr>
                <td colSpan={4}>No submissions.</td>
              </tr>
            )}
            {list.data.items.map((submission) => (
              <tr key={submission.id}>
                <td>
                  <Link to="/kyc/$submissionId" params={{ submissionId: submission.id }}>
                    {submission.personalDetails.firstName} {submission.personalDetails.lastName}
                  </Link>{' '}
                  {submission.user && <span className="meta">@{submission.user.username}</span>}
                </td>
                <td>{submission.documentType?.replace(/_/g, ' ') ?? '—'}</td>
                <td>
                  <Badge value={submission.status} />
                </td>
                <td>{when(submission.submittedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pagination={list.data?.pagination} onPage={setPage} />
    </>
  )
}

export function KycSubmissionPage() {
  const params: { submissionId?: string } = useParams({ strict: false })
  const submissionId = params.submissionId ?? ''
  const navigate = useNavigate()
  const { can } = useSession()
  const submission = useQuery({ queryKey: ['kyc', submissionId], queryFn: () => call(api.GET('/api/v1/admin/kyc/{submissionId}', { params: { path: { submissionId } } })) })
  const back = () => navigate({ to: '/kyc' })
  const approve = useAction(() => call(api.POST('/api/v1/admin/kyc/{submissionId}/approve', { params: { path: { submissionId } } })).then(back), ['kyc', 'stats'])
  const reject = useAction((reason: string) => call(api.POST('/api/v1/admin/kyc/{submissionId}/reject', { params: { path: { submissionId } }, body: { reason } })).then(back), ['kyc', 'stats'])
  if (submission.error) return <ErrorText error={submission.error} />
  if (!submission.data) return <Loading what="the submission" />
  const { personalDetails: details, documents } = submission.data
  return (
    <>
      <p>
        <Link to="/kyc">← KYC queue</Link>
      </p>
      <h1>
        {details.firstName} {details.lastName}
      </h1>
      <p>
        <Badge value={submission.data.status} /> submitted {when(submission.data.submittedAt)}
        {submission.data.user && (
          <>
            {' '}
            by{' '}
            {can('view_users') ? (
              <Link to="/users/$userId" params={{ userId: submission.data.userId }}>
                @{submission.data.user.username}
              </Link>
            ) : (
              `@${submission.data.user.username}`
            )}
          </>
        )}
      </p>
      <dl className="facts">
        <dt>Date of birth</dt>
        <dd>{details.dateOfBirth}</dd>
        <dt>Country</dt>
        <dd>{details.country}</dd>
        <dt>Phone</dt>
        <dd>{details.phone}</dd>
        <dt>Document</dt>
        <dd>{submission.data.documentType?.replace(/_/g, ' ') ?? '—'}</dd>
        {submission.data.rejectionReason && (
          <>
            <dt>Rejected because</dt>
            <dd>{submission.data.rejectionReason}</dd>
          </>
        )}
      </dl>
      <h2>Documents</h2>
      <div className="documents">
        {documents.length === 0 && <p>No documents.</p>}
        {documents.map((document) => (
          <figure key={document.id}>
            {document.mimetype === 'application/pdf' ? (
              <object data={document.url} type="application/pdf" aria-label={`${document.side} of the document (PDF)`}>
                <a href={document.url}>Open {document.filename}</a>
              </object>
            ) : (
              <img src={document.url} alt={`${document.side} of the document`} />
            )}
            <figcaption>
              {document.side}: <a href={document.url}>{document.filename}</a> ({Math.round(document.size / 1024)} KB)
            </figcaption>
          </figure>
        ))}
      </div>
      {submission.data.status === 'pending_review' && (
        <Can permission="manage_kyc">
          <div className="actions">
            <ActionButton label="Approve" busy={approve.isPending} onClick={() => approve.mutate(undefined)} />
            <ReasonAction label="Reject" busy={reject.isPending} error={reject.error} onSubmit={(reason) => reject.mutate(reason)} />
          </div>
          <ErrorText error={approve.error} />
        </Can>
      )}
    </>
  )
}
