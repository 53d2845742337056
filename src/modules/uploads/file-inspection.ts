import { rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileTypeFromFile } from 'file-type'
import sharp from 'sharp'
import { stagingName } from '../../platform/staging/staging.ts'
import { isRaster } from './upload-rules.ts'

export interface InspectedFile {
  path: string
  size: number
  mimetype: string
  /** With the dot, from the detected type; empty when the type is unknown. */
  extension: string
  /** Whether the bytes are a re-encoded raster image (safe to show inline). */
  isImage: boolean
}

/** Larger images are refused: a small file can decode to gigabytes (a decompression bomb). */
const MAX_PIXELS = 50_000_000

export class UnreadableImageError extends Error {}

/**
 * Detects the type from the bytes (never from the name or the client's Content-Type) and
 * re-encodes raster images, which drops metadata such as GPS positions and breaks polyglot files.
 * Returns a new staged file when it re-encodes; the caller removes both.
 */
export async function inspectFile(stagedPath: string, tmpDir: string): Promise<InspectedFile> {
  const detected = await fileTypeFromFile(stagedPath)
  const mimetype = detected?.mime ?? 'application/octet-stream'
  const extension = detected ? `.${detected.ext}` : ''
  if (!isRaster(mimetype)) {
    return { path: stagedPath, size: (await stat(stagedPath)).size, mimetype, extension, isImage: false }
  }
  const output = join(tmpDir, stagingName(extension))
  try {
    const image = sharp(stagedPath, { limitInputPixels: MAX_PIXELS, failOn: 'error', animated: mimetype === 'image/gif' || mimetype === 'image/webp' }).rotate()
    const encoded =
      mimetype === 'image/jpeg' ? image.jpeg({ quality: 88 }) : mimetype === 'image/png' ? image.png() : mimetype === 'image/webp' ? image.webp({ quality: 88 }) : image.gif()
    const info = await encoded.toFile(output)
    return { path: output, size: info.size, mimetype, extension, isImage: true }
  } catch (error) {
    await rm(output, { force: true })
    throw new UnreadableImageError(error instanceof Error ? error.message : String(error))
  }
}
