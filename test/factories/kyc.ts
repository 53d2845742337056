import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { request } from '../setup/test-app.ts'
import { multipart, png, type FormPart } from './files.ts'

/** Step 1 details that pass every rule (a real London number, an adult). */
export const PERSONAL_DETAILS = { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1990-05-17', country: 'GB', phone: '+442071838750' }

/** Step 2's form: `documentType` and the files given (each a real PNG unless another body is passed). */
export async function documentsForm(documentType: string | undefined, files: Partial<Record<'documentFront' | 'documentBack' | 'selfie', Buffer>> | 'all' = 'all') {
  const chosen = files === 'all' ? { documentFront: await png({ seed: 1 }), documentBack: await png({ seed: 2 }), selfie: await png({ seed: 3 }) } : files
  const parts: FormPart[] = [
    ...(documentType !== undefined ? [{ name: 'documentType', value: documentType }] : []),
    ...Object.entries(chosen).map(([name, content]) => ({ name, filename: `${name}.png`, content, contentType: 'image/png' })),
  ]
  return multipart(parts)
}

export const kycStep1 = (app: FastifyInstance, token: string | undefined, payload: Record<string, unknown> = PERSONAL_DETAILS) =>
  request(app, { method: 'POST', url: '/seller/kyc/step1', token, payload })

export const kycStep2 = (app: FastifyInstance, token: string | undefined, form: { payload: Buffer; headers: Record<string, string> }) =>
  request(app, { method: 'POST', url: '/seller/kyc/step2', token, payload: form.payload, headers: form.headers })

/** Takes a user through both steps; answers the submission id awaiting review. */
export async function submitKyc(app: FastifyInstance, token: string): Promise<string> {
  const first = await kycStep1(app, token)
  expect(first.statusCode, first.body).toBe(200)
  const second = await kycStep2(app, token, await documentsForm('id_card'))
  expect(second.statusCode, second.body).toBe(200)
  return second.json().data.submissionId as string
}

/** Both steps, then a reviewer's approval: the user ends `isKYCVerified`. */
export async function passKyc(app: FastifyInstance, token: string, reviewerToken: string): Promise<string> {
  const submissionId = await submitKyc(app, token)
  const approved = await request(app, { method: 'POST', url: `/admin/kyc/${submissionId}/approve`, token: reviewerToken })
  expect(approved.statusCode, approved.body).toBe(200)
  return submissionId
}
