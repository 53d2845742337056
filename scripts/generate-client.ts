import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CLIENT_DIR, generatedClientFiles } from './openapi-document.ts'

/** `npm run client:generate`: rewrites clients/ts/schema.ts. */
const files = await generatedClientFiles()
for (const [name, content] of Object.entries(files)) writeFileSync(join(CLIENT_DIR, name), content)
console.log(`wrote ${Object.keys(files).map((name) => join('clients/ts', name)).join(', ')}`)
