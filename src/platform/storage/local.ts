import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, rename, rm, stat } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { newId } from '../../lib/ids.ts'
import { assertSafeKey, StorageNotFoundError, type ByteRange, type StorageDriver } from './storage.ts'

/** Files on the local disk under one root directory (`DATA_DIR/uploads`). */
export function createLocalStorage(root: string): StorageDriver {
  const base = resolve(root)
  const pathOf = (key: string) => {
    assertSafeKey(key)
    const path = resolve(join(base, key))
    if (!path.startsWith(base + sep)) throw new Error(`storage key escapes the root: ${key}`)
    return path
  }
  const isFile = async (path: string) => (await stat(path).catch(() => undefined))?.isFile() === true

  return {
    kind: 'local',

    async put(key, body) {
      const path = pathOf(key)
      await mkdir(dirname(path), { recursive: true })
      // Written beside the target and renamed, so a reader never sees half a file.
      const partial = `${path}.${newId()}.part`
      try {
        await pipeline(body, createWriteStream(partial, { flags: 'wx' }))
        await rename(partial, path)
      } catch (error) {
        await rm(partial, { force: true })
        throw error
      }
    },

    async get(key: string, range?: ByteRange): Promise<Readable> {
      const path = pathOf(key)
      if (!(await isFile(path))) throw new StorageNotFoundError(key)
      return createReadStream(path, range ? { start: range.start, end: range.end } : {})
    },

    exists: async (key) => isFile(pathOf(key)),

    async delete(key) {
      await rm(pathOf(key), { force: true })
    },

    async move(from, to) {
      const source = pathOf(from)
      const target = pathOf(to)
      if (!(await isFile(source))) {
        if (await isFile(target)) return
        throw new StorageNotFoundError(from)
      }
      await mkdir(dirname(target), { recursive: true })
      await rename(source, target)
    },
  }
}
