import { readdir, rm, stat } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { HOUR } from '../../lib/clock.ts'
import { newId } from '../../lib/ids.ts'
import { isProcessAlive } from '../../lib/processes.ts'

/**
 * Uploads are staged as files under DATA_DIR/tmp while they arrive and are checked. Each name
 * starts with the host and pid of the process writing it, so after a crash the files of a dead
 * process of this host are recognised as abandoned at once, while those of a live process, or of
 * another host (a container sharing the volume, whose pids mean nothing here), are left alone
 * until they are clearly stale.
 */
const HOST = hostname().replace(/[^A-Za-z0-9_-]/g, '_')

export const stagingName = (extension = '.upload'): string => `${HOST}.${process.pid}-${newId()}${extension}`

/** Older than this, a staged file belongs to no request still running, whoever wrote it. */
export const STAGING_MAX_AGE_MS = HOUR

const OWNER = /^([A-Za-z0-9_-]+)\.(\d+)-/

/** Deletes abandoned staging files; returns how many. A missing directory is an empty one. */
export async function sweepStaging(dir: string, now: Date = new Date()): Promise<number> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return 0
    throw error
  }
  let removed = 0
  for (const name of names) {
    const path = join(dir, name)
    const owner = OWNER.exec(name)
    const abandoned = owner !== null && owner[1] === HOST && !isProcessAlive(Number(owner[2]))
    try {
      const info = await stat(path)
      if (!info.isFile()) continue
      if (!abandoned && now.getTime() - info.mtimeMs < STAGING_MAX_AGE_MS) continue
      await rm(path, { force: true })
      removed++
    } catch (error) {
      // Finished and removed by its request meanwhile.
      if ((error as { code?: string }).code !== 'ENOENT') throw error
    }
  }
  return removed
}
