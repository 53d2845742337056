import contentDisposition from 'content-disposition'
import type { FastifyReply, FastifyRequest } from 'fastify'
import parseRange from 'range-parser'
import { commonErrors, fail } from '../lib/errors.ts'
import type { FileToSend } from '../platform/files.ts'
import type { ByteRange } from '../platform/storage/storage.ts'

/** Sends stored bytes with safe headers, conditional GET and single byte ranges (RFC 9110). */
export async function sendFile(request: FastifyRequest, reply: FastifyReply, file: FileToSend): Promise<FastifyReply> {
  let range: ByteRange | undefined
  const header = request.headers.range
  if (header && file.size > 0) {
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
    .header('Content-Disposition', contentDisposition(file.filename, { type: file.inline ? 'inline' : 'attachment' }))
    // Even if a file slipped through as active content, it runs nothing and embeds nothing.
    .header('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
    .header('X-Content-Type-Options', 'nosniff')
    .header('Cache-Control', file.cacheControl)
    .header('ETag', file.etag)
    .header('Last-Modified', file.lastModified.toUTCString())
    .header('Accept-Ranges', 'bytes')

  if (request.headers['if-none-match'] === file.etag) return reply.status(304).send()
  if (range) {
    reply.status(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`).header('Content-Length', range.end - range.start + 1)
    return reply.send(await file.read(range))
  }
  reply.header('Content-Length', file.size)
  return reply.send(await file.read())
}
