import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useId, useState, type FormEvent, type ReactNode } from 'react'
import { ApiError } from './api.ts'

/** The API's message for a failed call (with the fields it names), read out to screen readers. */
export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null
  const message = error instanceof Error ? error.message : 'Something went wrong'
  const details = error instanceof ApiError && Array.isArray(error.details) ? (error.details as { field?: string; message?: string }[]) : []
  if (details.length === 0) {
    return (
      <p role="alert" className="error">
        {message}
      </p>
    )
  }
  return (
    <p role="alert" className="error">
      {message.replace(/\.$/, '')}: {details.map((detail) => `${detail.field} ${detail.message}`).join('; ')}
    </p>
  )
}

export function Loading({ what }: { what: string }) {
  return <p role="status">Loading {what}…</p>
}

interface Pagination {
  page: number
  pages: number
  total: number
  hasNext: boolean
  hasPrev: boolean
}

/** Moves through the API's pages; `label` names the list when a page has several. */
export function Pager({ pagination, onPage, label }: { pagination: Pagination | undefined; onPage: (page: number) => void; label?: string }) {
  if (!pagination) return null
  return (
    <nav className="pager" aria-label={label ? `Pages of ${label}` : 'Pages'}>
      <button type="button" disabled={!pagination.hasPrev} onClick={() => onPage(pagination.page - 1)}>
        Previous
      </button>
      <span>
        Page {pagination.page} of {Math.max(pagination.pages, 1)} ({pagination.total} in all)
      </span>
      <button type="button" disabled={!pagination.hasNext} onClick={() => onPage(pagination.page + 1)}>
        Next
      </button>
    </nav>
  )
}

export const money = (amount: number, currency = 'USD') => new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount)
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' }) : '—')

/** A call that changes something: its button, and the API's error when it fails. Refreshes the lists named by `invalidates`. */
export function useAction<A, R>(run: (argument: A) => Promise<R>, invalidates: string[]) {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: run,
    onSuccess: async () => {
      await Promise.all(invalidates.map((key) => queryClient.invalidateQueries({ queryKey: [key] })))
    },
  })
}

export function ActionButton({ label, onClick, busy, kind }: { label: string; onClick: () => void; busy?: boolean; kind?: 'danger' }) {
  return (
    <button type="button" className={kind} disabled={busy} onClick={onClick}>
      {label}
    </button>
  )
}

/**
 * An action that needs a reason (reject, suspend): a button that opens a small form with a
 * required text field; the API's error shows under it when the call fails.
 */
export function ReasonAction({ label, onSubmit, error, busy, required = true }: { label: string; onSubmit: (reason: string) => void; error: unknown; busy: boolean; required?: boolean }) {
  const [open, setOpen] = useState(false)
  const id = useId()
  if (!open) return <ActionButton label={`${label}…`} kind="danger" onClick={() => setOpen(true)} />
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    onSubmit((new FormData(event.currentTarget).get('reason') as string | null) ?? '')
  }
  return (
    <form className="reason" onSubmit={submit}>
      <label htmlFor={id}>Reason</label>
      <textarea id={id} name="reason" required={required} maxLength={500} rows={2} autoFocus />
      <button type="submit" className="danger" disabled={busy}>
        {label}
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ErrorText error={error} />
    </form>
  )
}

/** A form of an amount and a note, opened by a button: a split resolution, a staff refund, a wallet adjustment. */
export function AmountAction({ open, label, amountLabel, noteLabel = 'Note', noteMax = 1000, min = 0, max, onOpen, onClose, onSubmit, error, busy }: {
  open: boolean
  label: string
  amountLabel: string
  noteLabel?: string
  noteMax?: number
  min?: number
  max?: number
  onOpen: () => void
  onClose: () => void
  onSubmit: (amount: number, note: string) => void
  error: unknown
  busy: boolean
}) {
  const amountId = useId()
  const noteId = useId()
  if (!open) return <ActionButton label={`${label}…`} kind="danger" onClick={onOpen} />
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget)
    onSubmit(Number(form.get('amount')), (form.get('note') as string | null) ?? '')
  }
  return (
    <form className="reason" onSubmit={submit} aria-label={label}>
      <label htmlFor={amountId}>{amountLabel}</label>
      <input id={amountId} name="amount" type="number" min={min} max={max} step={0.01} required autoFocus />
      <label htmlFor={noteId}>{noteLabel}</label>
      <textarea id={noteId} name="note" required maxLength={noteMax} rows={2} />
      <button type="submit" className="danger" disabled={busy}>
        {label}
      </button>
      <button type="button" onClick={onClose}>
        Cancel
      </button>
      <ErrorText error={error} />
    </form>
  )
}

/** An action that cannot be taken back: a button that asks once more, saying what will happen. */
export function ConfirmAction({ label, warning, onConfirm, error, busy }: { label: string; warning: string; onConfirm: () => void; error: unknown; busy: boolean }) {
  const [open, setOpen] = useState(false)
  if (!open) return <ActionButton label={`${label}…`} kind="danger" onClick={() => setOpen(true)} />
  return (
    <div className="reason" role="group" aria-label={label}>
      <p>{warning}</p>
      <button type="button" className="danger" disabled={busy} onClick={onConfirm} autoFocus>
        {label}
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Back
      </button>
      <ErrorText error={error} />
    </div>
  )
}

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
    </label>
  )
}

/** A status word as a coloured badge (the colour repeats what the word says). */
export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value}`}>{value.replace(/_/g, ' ')}</span>
}

/** A small line chart as inline SVG, with its figures in a table for screen readers. */
export function Sparkline({ title, points, format }: { title: string; points: { date: string; value: number }[]; format: (value: number) => string }) {
  const width = 320
  const height = 80
  const max = Math.max(1, ...points.map((point) => point.value))
  const step = points.length > 1 ? width / (points.length - 1) : width
  const path = points.map((point, index) => `${index === 0 ? 'M' : 'L'}${(index * step).toFixed(1)},${(height - (point.value / max) * (height - 4) - 2).toFixed(1)}`).join(' ')
  const total = points.reduce((sum, point) => sum + point.value, 0)
  return (
    <figure className="chart">
      <figcaption>
        {title}: <strong>{format(total)}</strong> over {points.length} days
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title} per day, highest ${format(max)}`}>
        <path d={`${path} L${width},${height} L0,${height} Z`} className="area" />
        <path d={path} className="line" />
      </svg>
      <details>
        <summary>Figures</summary>
        <table>
          <tbody>
            {points
              .filter((point) => point.value !== 0)
              .map((point) => (
                <tr key={point.date}>
                  <th scope="row">{point.date}</th>
                  <td>{format(point.value)}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  )
}
