import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Signed links to private files: `?expires=<unix seconds>&signature=<HMAC-SHA256(path, expires)>`.
 * Anyone holding the link may read the file until it expires, so links are short-lived and handed
 * only to callers who may see the file.
 */
export function createUrlSigner(secret: string) {
  const key = createHmac('sha256', secret).update('marketplace:signed-upload-url').digest()
  const sign = (path: string, expires: number) => createHmac('sha256', key).update(`${path}\n${expires}`).digest('base64url')

  return {
    sign(path: string, expires: number): { expires: number; signature: string } {
      return { expires, signature: sign(path, expires) }
    },
    verify(path: string, expires: number, signature: string, nowSeconds: number): boolean {
      if (!Number.isSafeInteger(expires) || expires < nowSeconds) return false
      const expected = Buffer.from(sign(path, expires))
      const given = Buffer.from(signature)
      return expected.length === given.length && timingSafeEqual(expected, given)
    },
  }
}

export type UrlSigner = ReturnType<typeof createUrlSigner>
