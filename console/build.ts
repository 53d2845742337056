/**
 * Builds the console into console/dist; `npm install` and `npm ci` run it (the `prepare` script),
 * and `npm start` serves the result at /console. An install without the development
 * dependencies (the production image installs the built files instead) has no Vite and skips it.
 */
import { fileURLToPath } from 'node:url'
import type * as Vite from 'vite'

const configFile = fileURLToPath(new URL('vite.config.ts', import.meta.url))
let vite: typeof Vite
try {
  vite = await import('vite')
} catch {
  console.log('console: Vite is not installed (production install), the console is not built')
  process.exit(0)
}
const started = Date.now()
await vite.build({ configFile, logLevel: 'warn' })
console.log(`console: built into console/dist in ${((Date.now() - started) / 1000).toFixed(1)} s`)
