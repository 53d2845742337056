import { createReadStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import type { Actor } from '../../access/access.ts'
import type { Db, Tx } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { HOUR } from '../../lib/clock.ts'
import { fieldError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { StagedFile } from '../../platform/files.ts'
import type { Outbox } from '../../platform/outbox/outbox.ts'
import type { StorageDriver } from '../../platform/storage/storage.ts'
import { inspectFile, UnreadableImageError, type InspectedFile } from './file-inspection.ts'
import { STORAGE_JOBS } from './storage-jobs.ts'
import { keyFor, type UploadBinding, type UploadTarget } from './upload-binding.service.ts'
import { createUploadUpkeep } from './upload-upkeep.service.ts'
import { MAX_UPLOAD_BYTES, MB, ruleViolation, sanitiseFilename, TAG_RULES } from './upload-rules.ts'
import { createUploadsRepository } from './uploads.repository.ts'
import type { UploadRow, UploadTag } from './uploads.table.ts'

const ORPHAN_GRACE = HOUR

/** Bytes already in storage whose row is not written yet: `recordFiles` writes it, `discardFiles` undoes it. */
export interface StoredFile {
  readonly row: UploadRow
}

/** Checks the staged bytes against the tag's rule and re-encodes images; throws a field error. */
async function inspect(staged: StagedFile, tag: UploadTag | undefined, field: string, tmpDir: string): Promise<InspectedFile> {
  const rule = tag ? TAG_RULES[tag] : undefined
  let inspected: InspectedFile
  try {
    inspected = await inspectFile(staged.path, tmpDir)
  } catch (error) {
    if (!(error instanceof UnreadableImageError)) throw error
    // A damaged image may still be a legitimate attachment; it is then served as plain bytes.
    if (rule && rule.accepts !== 'any') throw fieldError(field, 'is not a readable image')
    inspected = { path: staged.path, size: staged.size, mimetype: 'application/octet-stream', extension: '', isImage: false }
  }
  // Limits apply to what the client sent, and the type to what was detected.
  const sent = { mimetype: inspected.mimetype, size: Math.max(staged.size, inspected.size) }
  const violation = rule ? ruleViolation(rule, sent) : sent.size > MAX_UPLOAD_BYTES ? `must be at most ${MAX_UPLOAD_BYTES / MB} MB` : undefined
  if (violation) {
    if (inspected.path !== staged.path) await rm(inspected.path, { force: true })
    throw fieldError(field, violation)
  }
  return inspected
}

/** The row of a file whose bytes were just stored at `key`, under its object's path or the owner's tmp/. */
function storedRow(actor: Actor, staged: StagedFile, inspected: InspectedFile, key: string, options: { tag?: UploadTag; target?: UploadTarget }, now: Date): UploadRow {
  return {
    id: newId(),
    ownerId: actor.id,
    objectType: options.target?.objectType ?? null,
    objectId: options.target?.objectId ?? null,
    tag: options.target?.tag ?? options.tag ?? null,
    path: key,
    storageKey: key,
    filename: sanitiseFilename(staged.filename),
    mimetype: inspected.mimetype,
    size: inspected.size,
    order: options.target?.order ?? 0,
    createdAt: now,
    updatedAt: now,
  }
}

/**
 * Storing bytes. Storage is never written inside a transaction, so storing is two steps: the
 * bytes go to storage first (`storeFiles`), then the caller records them in its own transaction
 * (`recordFiles`), and deletes them again if that transaction fails (`discardFiles`). A crash in
 * between is covered by a `storage.delete_if_orphan` job written before the bytes.
 */
export function createUploadStorage(deps: { db: Db; clock: Clock; storage: StorageDriver; outbox: Outbox; tmpDir: string; binding: Pick<UploadBinding, 'clearSlot' | 'queueByteDeletion'> }) {
  const { db, clock, storage, outbox, binding } = deps

  /** Inspects one staged file and puts its bytes in storage, under its object's path or the owner's tmp/. */
  async function storeOne(actor: Actor, staged: StagedFile, options: { tag?: UploadTag; target?: UploadTarget; field: string }): Promise<StoredFile> {
    const inspected = await inspect(staged, options.target?.tag ?? options.tag, options.field, deps.tmpDir)
    try {
      const fileName = `${newId()}${inspected.extension}`
      const key = options.target ? keyFor(options.target, fileName) : `tmp/${actor.id}/${fileName}`
      // If the process dies between storing the bytes and recording the row, this sweeps them up.
      await db.transaction((tx) => outbox.add(tx, STORAGE_JOBS.deleteIfOrphan, { key }, { runAt: new Date(clock.now().getTime() + ORPHAN_GRACE) }))
      await storage.put(key, createReadStream(inspected.path), { contentType: inspected.mimetype, size: inspected.size })
      return { row: storedRow(actor, staged, inspected, key, options, clock.now()) }
    } finally {
      if (inspected.path !== staged.path) await rm(inspected.path, { force: true })
    }
  }

  /** Deletes stored bytes whose rows were never committed (unless the commit went through after all). */
  async function discardFiles(stored: StoredFile[]): Promise<void> {
    for (const { row } of stored) {
      const recorded = await createUploadsRepository(db)
        .isReferenced(row.storageKey)
        .catch(() => true)
      if (!recorded) await storage.delete(row.storageKey).catch(() => undefined)
    }
  }

  /** Stores every file, or none: a refused file deletes the bytes of those stored before it. */
  async function storeFiles(actor: Actor, staged: StagedFile[], target: Omit<UploadTarget, 'order'>, field: string): Promise<StoredFile[]> {
    const stored: StoredFile[] = []
    try {
      for (const file of staged) stored.push(await storeOne(actor, file, { target, field }))
      return stored
    } catch (error) {
      await discardFiles(stored)
      throw error
    }
  }

  /**
   * Writes the rows of stored files in the caller's transaction (numbered from `firstOrder` in a
   * gallery). A single-file slot (avatar, banner) is emptied first: its previous file is deleted
   * after commit.
   */
  async function recordFiles(tx: Tx, stored: StoredFile[], firstOrder?: number): Promise<UploadRow[]> {
    const uploads = createUploadsRepository(tx)
    const rows: UploadRow[] = []
    for (const [index, { row }] of stored.entries()) {
      if (row.objectType && row.objectId && row.tag && TAG_RULES[row.tag].isSingle) {
        await binding.clearSlot(tx, { objectType: row.objectType, objectId: row.objectId, tag: row.tag })
      }
      rows.push(await uploads.insert({ ...row, order: firstOrder === undefined ? row.order : firstOrder + index }))
    }
    return rows
  }

  /** Records stored files in a transaction of their own; their bytes are deleted if it fails. */
  async function recordAlone<T>(stored: StoredFile[], record: (tx: Tx, rows: UploadRow[]) => Promise<T> | T): Promise<T> {
    try {
      return await db.transaction(async (tx) => record(tx, await recordFiles(tx, stored)))
    } catch (error) {
      await discardFiles(stored)
      throw error
    }
  }

  return {
    storeFiles,
    recordFiles,
    discardFiles,

    /** `POST /uploads`: an unattached file, bound later by sending its id in a field. */
    async storeUnattached(actor: Actor, staged: StagedFile, tag: UploadTag | undefined): Promise<UploadRow> {
      const stored = await storeOne(actor, staged, { tag, field: 'file' })
      return recordAlone([stored], (_tx, [row]) => row!)
    },

    /** Stores a file straight onto its object; a single-file slot's previous file is replaced. */
    async attachFile(actor: Actor, staged: StagedFile, target: UploadTarget, field = 'file'): Promise<UploadRow> {
      const stored = await storeOne(actor, staged, { target, field })
      return recordAlone([stored], (_tx, [row]) => row!)
    },

    ...createUploadUpkeep(deps),
  }
}

export type UploadStorage = ReturnType<typeof createUploadStorage>
