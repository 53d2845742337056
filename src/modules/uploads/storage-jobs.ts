import { Type } from '@sinclair/typebox'
import { defineJob } from '../../platform/outbox/jobs.ts'

/** Work on stored bytes that must wait for a commit (storage is never touched inside a transaction). */
export const STORAGE_JOBS = {
  /** A bound upload's bytes move from `tmp/<owner>/` to their object's path. */
  move: defineJob('storage.move', Type.Object({ uploadId: Type.String(), from: Type.String(), to: Type.String() })),
  /** Bytes of a deleted or replaced file. */
  delete: defineJob('storage.delete', Type.Object({ key: Type.String() })),
  /** Bytes stored just before their row: deleted after a grace period unless a row refers to them. */
  deleteIfOrphan: defineJob('storage.delete_if_orphan', Type.Object({ key: Type.String() })),
}
