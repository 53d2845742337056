/**
 * The seven multipart forms: the OpenAPI document describes each as the handler reads it (text
 * fields as strings with their allowed values and limits, files as binary, what is required),
 * and every form refuses a field it does not take, as JSON bodies do.
 */
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentTypes } from '../../src/modules/kyc/kyc.table.ts'
import { uploads, uploadTags } from '../../src/modules/uploads/uploads.table.ts'
import { multipart, png, type FormPart } from '../factories/files.ts'
import { kycStep1 } from '../factories/kyc.ts'
import { sendMessage } from '../factories/messages.ts'
import { orderIn } from '../factories/orders.ts'
import { createCategory, publishService } from '../factories/services.ts'
import { createUser, type TestUser } from '../factories/users.ts'
import { createTestApp, expectError, request, type TestContext } from '../setup/test-app.ts'

type Json = Record<string, unknown>
const MB = 1024 * 1024
const binary = (maxBytes: number) => ({ type: 'string', format: 'binary', maxLength: maxBytes })

/** Each form as the routes read it: its text fields, its files, and what is required. */
const FORMS: Record<string, { text: Record<string, Json>; files: Record<string, Json>; required: string[] }> = {
  'POST /api/v1/uploads': { text: { tag: { type: 'string', enum: [...uploadTags] } }, files: { file: binary(10 * MB) }, required: ['file'] },
  'POST /api/v1/users/me/avatar': { text: {}, files: { file: binary(5 * MB) }, required: ['file'] },
  'POST /api/v1/services/{serviceId}/images': { text: {}, files: { files: { type: 'array', minItems: 1, maxItems: 10, items: binary(10 * MB) } }, required: ['files'] },
  'POST /api/v1/services/{serviceId}/banner': { text: {}, files: { file: binary(10 * MB) }, required: ['file'] },
  'POST /api/v1/orders/{orderId}/deliver': {
    text: { message: { type: 'string', minLength: 1, maxLength: 1000 } },
    files: { files: { type: 'array', minItems: 1, maxItems: 10, items: binary(10 * MB) } },
    required: ['message', 'files'],
  },
  'POST /api/v1/seller/kyc/step2': {
    text: { documentType: { type: 'string', enum: [...documentTypes] } },
    files: { documentFront: binary(10 * MB), documentBack: binary(10 * MB), selfie: binary(10 * MB) },
    required: ['documentType', 'documentFront', 'selfie'],
  },
  'POST /api/v1/messages/files': {
    text: { conversationId: { type: 'string', format: 'uuid', maxLength: 36 }, content: { type: 'string', maxLength: 5000 } },
    files: { file: binary(10 * MB) },
    required: ['conversationId', 'file'],
  },
}

describe('multipart forms', () => {
  let ctx: TestContext
  let image: Buffer
  beforeAll(async () => {
    ctx = await createTestApp()
    image = await png({ width: 16, height: 16 })
  })
  afterAll(() => ctx.close())

  describe('in the OpenAPI document', () => {
    let document: Json
    beforeAll(async () => {
      document = (await request(ctx.app, { method: 'GET', url: '/openapi.json' })).json()
    })

    const formsOf = (doc: Json) =>
      Object.entries(doc.paths as Record<string, Record<string, { requestBody?: { required?: boolean; content: Record<string, { schema: Json }> } }>>).flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, operation]) => {
          const media = operation.requestBody?.content['multipart/form-data']
          return media ? [{ name: `${method.toUpperCase()} ${path}`, schema: media.schema, required: operation.requestBody?.required }] : []
        }),
      )

    it('has exactly the seven forms', () => {
      expect(formsOf(document).map((form) => form.name).sort()).toEqual(Object.keys(FORMS).sort())
    })

    it('describes text fields as strings with their values and limits, files as binary, and what is required', () => {
      for (const { name, schema, required } of formsOf(document)) {
        const expected = FORMS[name]!
        const properties = schema.properties as Record<string, Json>
        expect(Object.keys(properties).sort(), name).toEqual([...Object.keys(expected.text), ...Object.keys(expected.files)].sort())
        for (const [field, rule] of Object.entries(expected.text)) {
          expect(properties[field], `${name} ${field}`).toMatchObject(rule)
          expect(properties[field]!.format, `${name} ${field} is a text field`).not.toBe('binary')
        }
        for (const [field, rule] of Object.entries(expected.files)) expect(properties[field], `${name} ${field}`).toMatchObject(rule)
        expect([...((schema.required as string[] | undefined) ?? [])].sort(), name).toEqual([...expected.required].sort())
        expect(schema.additionalProperties, name).toBe(false)
        expect(required, name).toBe(true)
      }
    })
  })

  describe('refuse a field they do not take (400 naming it), and keep nothing', () => {
    interface Form {
      token: string
      url: string
      parts: FormPart[]
      owner: TestUser
    }
    const file = (name: string): FormPart => ({ name, filename: `${name}.png`, content: image, contentType: 'image/png' })
    const user = () => createUser(ctx)
    const FORM_OF: Record<string, () => Promise<Form>> = {
      'POST /api/v1/uploads': async () => {
        const owner = await user()
        return { owner, token: owner.accessToken, url: '/uploads', parts: [{ name: 'tag', value: 'service_gallery' }, file('file')] }
      },
      'POST /api/v1/users/me/avatar': async () => {
        const owner = await user()
        return { owner, token: owner.accessToken, url: '/users/me/avatar', parts: [file('file')] }
      },
      'POST /api/v1/services/{serviceId}/images': async () => {
        const owner = await user()
        return { owner, token: owner.accessToken, url: `/services/${await publishService(ctx, owner.accessToken, await createCategory(ctx))}/images`, parts: [file('files')] }
      },
      'POST /api/v1/services/{serviceId}/banner': async () => {
        const owner = await user()
        return { owner, token: owner.accessToken, url: `/services/${await publishService(ctx, owner.accessToken, await createCategory(ctx))}/banner`, parts: [file('file')] }
      },
      'POST /api/v1/orders/{orderId}/deliver': async () => {
        const order = await orderIn(ctx, 'in_progress')
        return { owner: order.seller, token: order.seller.accessToken, url: `/orders/${order.orderId}/deliver`, parts: [{ name: 'message', value: 'The logo, as agreed.' }, file('files')] }
      },
      'POST /api/v1/seller/kyc/step2': async () => {
        const owner = await user()
        expect((await kycStep1(ctx.app, owner.accessToken)).statusCode).toBe(200)
        return { owner, token: owner.accessToken, url: '/seller/kyc/step2', parts: [{ name: 'documentType', value: 'passport' }, file('documentFront'), file('selfie')] }
      },
      'POST /api/v1/messages/files': async () => {
        const [owner, other] = await Promise.all([user(), user()])
        const { conversationId } = await sendMessage(ctx, other, { recipientId: owner.user.id })
        return { owner, token: owner.accessToken, url: '/messages/files', parts: [{ name: 'conversationId', value: conversationId }, file('file')] }
      },
    }
    const send = (form: Form, parts: FormPart[]) => {
      const body = multipart(parts)
      return request(ctx.app, { method: 'POST', url: form.url, token: form.token, payload: body.payload, headers: body.headers })
    }
    const uploadsOf = (userId: string) => ctx.database.db.select().from(uploads).where(eq(uploads.ownerId, userId))

    for (const name of Object.keys(FORMS)) {
      it(`${name}: an unknown text field, before or after the files`, async () => {
        const form = await FORM_OF[name]!()
        for (const parts of [[{ name: 'note', value: 'hello' }, ...form.parts], [...form.parts, { name: 'note', value: 'hello' }]]) {
          const refused = await send(form, parts)
          expectError(refused, 400, 'VALIDATION_ERROR', ['note'])
          expect(refused.json().error.details[0].message).toBe('is not an accepted field')
        }
        expect(await uploadsOf(form.owner.user.id)).toEqual([])
        // The same form without it is taken: the refusal was the field's.
        const taken = await send(form, form.parts)
        expect(taken.statusCode, taken.body).toBeLessThan(300)
      })
    }

    it('refuses a text field sent twice, a text field sent as a file, and a file field sent as text', async () => {
      const form = await FORM_OF['POST /api/v1/uploads']!()
      expectError(await send(form, [{ name: 'tag', value: 'avatar' }, { name: 'tag', value: 'service_gallery' }, file('file')]), 400, 'VALIDATION_ERROR', ['tag'])
      const asFile = await send(form, [file('tag'), file('file')])
      expectError(asFile, 400, 'VALIDATION_ERROR', ['tag'])
      expect(asFile.json().error.details[0].message).toBe('must be a text value, not a file')
      expectError(await send(form, [{ name: 'file', value: 'not a file' }]), 400, 'VALIDATION_ERROR', ['file'])
      expectError(await send(form, [{ name: 'tag', value: 'wallpaper' }, file('file')]), 400, 'VALIDATION_ERROR', ['tag'])
      expect(await uploadsOf(form.owner.user.id)).toEqual([])
    })

    it('keeps a 5000-character caption whole and refuses one character more (400 on content)', async () => {
      const form = await FORM_OF['POST /api/v1/messages/files']!()
      const caption = 'é'.repeat(5000)
      expectError(await send(form, [...form.parts, { name: 'content', value: `${caption}é` }]), 400, 'VALIDATION_ERROR', ['content'])
      const sent = await send(form, [...form.parts, { name: 'content', value: caption }])
      expect(sent.statusCode, sent.body).toBe(201)
      expect(sent.json().data.content).toBe(caption)
    })

    it('names every missing required field at once', async () => {
      const form = await FORM_OF['POST /api/v1/messages/files']!()
      expectError(await send(form, []), 400, 'VALIDATION_ERROR', ['conversationId', 'file'])
      const kyc = await FORM_OF['POST /api/v1/seller/kyc/step2']!()
      expectError(await send(kyc, [file('documentFront')]), 400, 'VALIDATION_ERROR', ['documentType', 'selfie'])
    })
  })
})
