import type { StorageConfig } from '../../config.ts'
import { createLocalStorage } from './local.ts'
import { createS3Storage } from './s3.ts'
import type { StorageDriver } from './storage.ts'

/** Local disk by default; S3-compatible storage when S3_BUCKET is set. */
export const createStorage = (config: StorageConfig): StorageDriver => (config.kind === 's3' ? createS3Storage(config) : createLocalStorage(config.dir))
