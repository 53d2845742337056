import { describe, expect, it } from 'vitest'
import { createUrlSigner } from './signed-urls.ts'

const OLD = 'old-access-secret-0123456789-abcdefghij'
const NEW = 'new-access-secret-0123456789-abcdefghij'
const PATH = 'order/0196a000-0000-7000-8000-000000000000/order_delivery/file.pdf'

describe('signed upload links', () => {
  it('verify until they expire, for that path only', () => {
    const signer = createUrlSigner(NEW)
    const { expires, signature } = signer.sign(PATH, 2_000)
    expect(signer.verify(PATH, expires, signature, 1_999)).toBe(true)
    expect(signer.verify(PATH, expires, signature, 2_001)).toBe(false)
    expect(signer.verify(`${PATH}x`, expires, signature, 1_999)).toBe(false)
    expect(signer.verify(PATH, expires + 1, signature, 1_999)).toBe(false)
  })

  it('signed before a secret rotation still work during it, and not after it', () => {
    const { expires, signature } = createUrlSigner(OLD).sign(PATH, 2_000)
    expect(createUrlSigner(NEW, OLD).verify(PATH, expires, signature, 1_000)).toBe(true)
    expect(createUrlSigner(NEW).verify(PATH, expires, signature, 1_000)).toBe(false)
    const fresh = createUrlSigner(NEW, OLD).sign(PATH, 2_000)
    expect(createUrlSigner(NEW).verify(PATH, fresh.expires, fresh.signature, 1_000)).toBe(true)
  })
})
