import { randomBytes } from 'node:crypto'
import { crc32, deflateSync } from 'node:zlib'
import sharp from 'sharp'

export const MB = 1024 * 1024

/** A text field or a file part of a multipart/form-data body. */
export type FormPart = { name: string; value: string } | { name: string; filename: string; content: Buffer; contentType?: string }

export interface MultipartRequest {
  payload: Buffer
  headers: Record<string, string>
}

/**
 * Builds a multipart/form-data body by hand (RFC 7578), so tests control every detail a client
 * could get wrong: field names, several files, odd file names, a missing file part.
 */
export function multipart(parts: FormPart[], boundary = `----marketplace-test-${randomBytes(8).toString('hex')}`): MultipartRequest {
  const chunks: Buffer[] = []
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`))
      continue
    }
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
          `Content-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      part.content,
      Buffer.from('\r\n'),
    )
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

/** The usual form: one `file` part and an optional `tag` field. */
export function fileForm(content: Buffer, options: { filename?: string; contentType?: string; tag?: string; field?: string } = {}): MultipartRequest {
  return multipart([
    ...(options.tag !== undefined ? [{ name: 'tag', value: options.tag }] : []),
    { name: options.field ?? 'file', filename: options.filename ?? 'file.bin', content, contentType: options.contentType },
  ])
}

/** Deterministic noise (xorshift32): incompressible like random bytes, yet the same on every run. */
export function noise(size: number, seed = 0x9e3779b9): Buffer {
  const bytes = Buffer.alloc(size)
  let state = seed >>> 0 || 1
  for (let index = 0; index < size; index++) {
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    bytes[index] = state & 0xff
  }
  return bytes
}

/**
 * Bytes that match no file signature (they start with plain text, then noise), so type detection
 * answers "unknown" and only the size matters.
 */
export const opaqueBytes = (size: number, seed?: number): Buffer => {
  const prefix = Buffer.from('opaque test bytes\n')
  return Buffer.concat([prefix, noise(Math.max(0, size - prefix.length), seed)])
}

/** A real PNG of noisy pixels (so it does not compress away). */
export function png(options: { width?: number; height?: number; seed?: number } = {}): Promise<Buffer> {
  const width = options.width ?? 64
  const height = options.height ?? 48
  return sharp(noise(width * height * 3, options.seed), { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer()
}

/** A PNG that weighs about `bytes` even after re-encoding: noise does not compress. */
export const largePng = (bytes: number): Promise<Buffer> => {
  const side = Math.ceil(Math.sqrt(bytes / 3))
  return png({ width: side, height: side, seed: 7 })
}

/** Where the test JPEG says it was taken (Paris), in EXIF rational notation. */
export const GPS_EXIF = { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2964/100', GPSLongitudeRef: 'E', GPSLongitude: '2/1 17/1 4020/100' }

/** A JPEG carrying EXIF with a GPS position, as phones write it. */
export function jpegWithGps(): Promise<Buffer> {
  return sharp(noise(64 * 48 * 3, 3), { raw: { width: 64, height: 48, channels: 3 } })
    .jpeg()
    .withExif({ IFD0: { Make: 'TestPhone', Model: 'Model 1' }, IFD3: GPS_EXIF })
    .toBuffer()
}

/** Whether an image's EXIF block points to a GPS directory (TIFF tag 0x8825 in IFD0). */
export async function hasGpsExif(image: Buffer): Promise<boolean> {
  const { exif } = await sharp(image).metadata()
  if (!exif) return false
  const start = exif.subarray(0, 6).toString('latin1') === 'Exif\0\0' ? 6 : 0
  const little = exif.subarray(start, start + 2).toString('latin1') === 'II'
  const u16 = (at: number) => (little ? exif.readUInt16LE(start + at) : exif.readUInt16BE(start + at))
  const u32 = (at: number) => (little ? exif.readUInt32LE(start + at) : exif.readUInt32BE(start + at))
  const ifd0 = u32(4)
  const entries = u16(ifd0)
  for (let index = 0; index < entries; index++) if (u16(ifd0 + 2 + index * 12) === 0x8825) return true
  return false
}

/** The first half of a real PNG: the signature is right, the pixel data stops short. */
export async function truncatedPng(): Promise<Buffer> {
  const whole = await png({ width: 128, height: 128, seed: 11 })
  return whole.subarray(0, Math.floor(whole.length / 2))
}

const pngChunk = (type: string, data: Buffer): Buffer => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typeAndData))
  return Buffer.concat([length, typeAndData, crc])
}

/**
 * A decompression bomb: a valid PNG declaring 20000 x 20000 pixels (400 megapixels) of one colour,
 * a few tens of kilobytes on the wire. Assembled chunk by chunk because having sharp encode 400
 * megapixels takes seconds; 1-bit greyscale keeps the inflated rows at 50 MB while it is built.
 */
export function decompressionBomb(side = 20_000): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(side, 0)
  header.writeUInt32BE(side, 4)
  header.writeUInt8(1, 8) // bit depth
  header.writeUInt8(0, 9) // greyscale
  // Each row: filter byte 0, then side/8 bytes of black pixels; all zeros compress to almost nothing.
  const rows = Buffer.alloc((1 + Math.ceil(side / 8)) * side)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** A minimal valid one-page PDF with a correct cross-reference table. */
export function pdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << >> >>',
    '<< /Length 0 >>\nstream\n\nendstream',
  ]
  let body = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body))
    body += `${index + 1} 0 obj\n${object}\nendobj\n`
  })
  const xref = Buffer.byteLength(body)
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(body, 'latin1')
}

/** Active content that must never be served as a page. */
export const html = (): Buffer => Buffer.from('<!DOCTYPE html>\n<html><head><title>x</title></head><body><script>alert(document.cookie)</script></body></html>\n')

/** A vector image with a script inside: not a raster image, never accepted as one. */
export const svg = (): Buffer =>
  Buffer.from(
    '<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10" fill="red"/></svg>\n',
  )

/** Plain text with no signature. */
export const text = (): Buffer => Buffer.from('Meeting notes\nNothing to see here.\n')
