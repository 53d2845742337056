import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Signed links to private files: `?expires=<unix seconds>&signature=<HMAC-SHA256(path, expires)>`.
 * Anyone holding the link may read the file until it expires, so links are short-lived and handed
 * only to callers who may see the file.
 */
export function createUrlSigner(secret: string, previousSecret?: string) {
  const keyOf = (from: string) => createHmac('sha256', from).update('marketplace:signed-upload-url').digest()
  // Links are signed with the current secret; during a rotation links signed with the previous one still work.
  const keys = [keyOf(secret), ...(previousSecret ? [keyOf(previousSecret)] : [])]
  const sign = (path: string, expires: number, key = keys[0]!) => createHmac('sha256', key).update(`${path}\n${expires}`).digest('base64url')

  return {
    sign(path: string, expires: number): { expires: number; signature: string } {
      return { expires, signature: sign(path, expires) }
    },
    verify(path: string, expires: number, signature: string, nowSeconds: number): boolean {
      if (!Number.isSafeInteger(expires) || expires < nowSeconds) return false
      const given = Buffer.from(signature)
      return keys.some((key) => {
        const expected = Buffer.from(sign(path, expires, key))
        return expected.length === given.length && timingSafeEqual(expected, given)
      })
    },
  }
}

export type UrlSigner = ReturnType<typeof createUrlSigner>
