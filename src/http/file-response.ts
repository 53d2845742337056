import contentDisposition from 'content-disposition'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fresh from 'fresh'
import parseRange from 'range-parser'
import { commonErrors, fail } from '../lib/errors.ts'
import type { FileToSend } from '../platform/files.ts'
import type { ByteRange } from '../platform/storage/storage.ts'

/**
 * Whether a `Range` applies under the request's `If-Range` (RFC 9110 13.1.5): with no
 * `If-Range`, always; with an entity tag, when it is our strong tag (a weak one never matches);
 * with a date, when it is exactly the file's last modification. Otherwise the whole file goes.
 */
function rangeApplies(ifRange: string | undefined, etag: string, lastModified: string): boolean {
  if (ifRange === undefined) return true
  const validator = ifRange.trim()
  if (validator.startsWith('"') || validator.startsWith('W/')) return validator === etag
  return validator === lastModified
}

/**
 * Sends stored bytes with safe headers, conditional GET and single byte ranges (RFC 9110):
 * `If-None-Match` (weak comparison, lists, `*`) and `If-Modified-Since` as the `fresh` package
 * reads them, `Range` with `If-Range`. A file the store serves itself is a redirect there.
 */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: FileToSend): Promise<FastifyReply> {
  const disposition = contentDisposition(file.filename, { type: file.inline ? 'inline' : 'attachment' })
  if (file.elsewhere) {
    // The store answers ranges and conditions itself, with the same type, disposition and caching.
    const location = await file.elsewhere({ contentType: file.contentType, contentDisposition: disposition, cacheControl: file.cacheControl })
    // The location carries a credential: kept by no cache, sent to no other site.
    return reply.status(302).header('Location', location).header('Cache-Control', 'private, no-store').header('Referrer-Policy', 'no-referrer').send()
  }
  const lastModified = file.lastModified.toUTCString()
  let range: ByteRange | undefined
  const header = request.headers.range
  const ifRange = request.headers['if-range']
  // A repeated If-Range matches nothing: the whole file is the safe answer.
  if (header && file.size > 0 && rangeApplies(Array.isArray(ifRange) ? '' : ifRange, file.etag, lastModified)) {
    const ranges = parseRange(file.size, header, { combine: true })
    if (ranges === -1) {
      reply.header('Content-Range', `bytes */${file.size}`)
      throw fail(commonErrors.RANGE_NOT_SATISFIABLE, 'The requested range is outside the file')
    }
    // Malformed or multi-part ranges are ignored: the whole file is a valid answer to both.
    if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) range = ranges[0]
  }

  reply
    .header('Content-Type', file.contentType)
    .header('Content-Disposition', disposition)
    // Even if a file slipped through as active content, it runs nothing and embeds nothing.
    .header('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', file.cacheControl)
    .header('ETag', file.etag)
    .header('Last-Modified', lastModified)
    .header('Accept-Ranges', 'bytes')

  if (fresh(request.headers, { etag: file.etag, 'last-modified': lastModified })) return reply.status(304).send()
  if (range) {
    reply.status(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`).header('Content-Length', range.end - range.start + 1)
    return reply.send(await file.read(range))
  }
  reply.header('Content-Length', file.size)
  return reply.send(await file.read())
}
