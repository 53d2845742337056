import { execFile } from 'node:child_process'
import { join } from 'node:path'

/** A text field, or a file part of `bytes` bytes (built by the client, not sent across). */
export type ClientFormPart = { name: string; value: string } | { name: string; filename: string; bytes: number }

export interface ClientRequest {
  url: string
  token?: string
  /** A multipart form with its length declared, as `FormData` sends it. */
  form?: ClientFormPart[]
  /** Instead: a form whose one `file` part streams this many bytes, with no declared length. */
  streamedFileBytes?: number
}

export interface ClientResult {
  status?: number
  body?: { success: boolean; error?: { code: string; message: string; details: { field: string; message: string }[] } }
  /** Why the request failed on the client, when it did (`fetch failed: write EPIPE`). */
  error?: string
}

const SCRIPT = join(import.meta.dirname, 'fetch-client.process.ts')

/**
 * Sends one request with Node's `fetch` from another process. A client on the server's own event
 * loop cannot write while the server answers, which hides how a connection closed under a
 * sending client behaves; a real client runs elsewhere.
 */
export function fetchFromAnotherProcess(request: ClientRequest): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', SCRIPT, JSON.stringify(request)], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`the client process failed: ${stderr || error.message}`))
      else resolve(JSON.parse(stdout) as ClientResult)
    })
  })
}
