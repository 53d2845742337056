/**
 * The client process of `fetch-client.ts`: sends the request given as its argument with Node's
 * `fetch` and prints what came back (or how it failed) as JSON.
 */
import type { ClientRequest, ClientResult } from './fetch-client.ts'

const request = JSON.parse(process.argv[2]!) as ClientRequest
const CHUNK = Buffer.alloc(64 * 1024, 0x61)

function formData(parts: NonNullable<ClientRequest['form']>): FormData {
  const form = new FormData()
  for (const part of parts) {
    if ('value' in part) form.append(part.name, part.value)
    else form.append(part.name, new Blob([Buffer.alloc(part.bytes, 0x61)]), part.filename)
  }
  return form
}

/** A form with one file of `bytes` bytes, produced as the connection takes it. */
function streamedForm(bytes: number): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = 'fetch-client-boundary'
  let left = bytes
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`))
    },
    pull(controller) {
      if (left <= 0) {
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`))
        controller.close()
        return
      }
      const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, left))
      left -= chunk.length
      controller.enqueue(chunk)
    },
  })
  return { body, contentType: `multipart/form-data; boundary=${boundary}` }
}

async function send(): Promise<ClientResult> {
  const headers: Record<string, string> = request.token ? { authorization: `Bearer ${request.token}` } : {}
  let init: RequestInit & { duplex?: 'half' }
  if (request.streamedFileBytes !== undefined) {
    const { body, contentType } = streamedForm(request.streamedFileBytes)
    init = { method: 'POST', body, headers: { ...headers, 'content-type': contentType }, duplex: 'half' }
  } else {
    init = { method: 'POST', body: formData(request.form ?? []), headers }
  }
  try {
    const response = await fetch(request.url, init)
    return { status: response.status, body: (await response.json()) as ClientResult['body'] }
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause
    return { error: `${(error as Error).message}${cause?.message ? `: ${cause.message}` : ''}` }
  }
}

process.stdout.write(JSON.stringify(await send()))
