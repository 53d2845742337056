import { mkdtempSync, rmSync } from 'node:fs'
import type { Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'

/** The subset of s3rver's API the tests use (the package ships no type declarations). */
interface S3rverInstance {
  httpServer?: Server
  run(): Promise<AddressInfo>
  close(): Promise<void>
}
type S3rverConstructor = new (options: {
  address: string
  port: number
  directory: string
  silent: boolean
  configureBuckets: { name: string; configs: string[] }[]
}) => S3rverInstance

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor

/** s3rver accepts only its own well-known credentials on signed requests. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }

export interface TestS3 {
  endpoint: string
  bucket: string
  client: S3Client
  /** Environment for createTestApp / loadConfig that selects the S3 driver on this server. */
  env: { S3_BUCKET: string; S3_ENDPOINT: string; S3_ACCESS_KEY_ID: string; S3_SECRET_ACCESS_KEY: string }
  /** Every key in the bucket, optionally under a prefix, sorted. */
  listKeys(prefix?: string): Promise<string[]>
  /** Removes every object, so one test's leftovers never meet the next test's assertions. */
  empty(): Promise<void>
  stop(): Promise<void>
}

/** An S3-compatible server in this process, on a free port of 127.0.0.1, with one empty bucket. */
export async function startS3(bucket = 'marketplace-test'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'marketplace-s3-'))
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket, configs: [] }] })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })

  async function listKeys(prefix?: string): Promise<string[]> {
    const keys: string[] = []
    let token: string | undefined
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key)
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
    return keys.sort()
  }

  return {
    endpoint,
    bucket,
    client,
    env: { S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, S3_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey },
    listKeys,
    async empty() {
      const keys = await listKeys()
      if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } }))
    },
    async stop() {
      client.destroy()
      // A client that never finished its request (a failed upload) must not keep the server open.
      server.httpServer?.closeAllConnections()
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
