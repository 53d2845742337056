import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { users } from '../../src/modules/users/users.table.ts'
import { createMarketplaceClient } from '../../clients/ts/index.ts'
import { CLIENT_DIR, generatedClientFiles } from '../../scripts/openapi-document.ts'
import { createUser, DEFAULT_PASSWORD, unique } from '../factories/users.ts'
import { createTestApp, type TestContext } from '../setup/test-app.ts'

describe('the typed TypeScript client (clients/ts)', () => {
  it('is generated from the current OpenAPI document (run `npm run client:generate` after changing a route)', async () => {
    const files = await generatedClientFiles()
    for (const [name, content] of Object.entries(files)) {
      expect(readFileSync(join(CLIENT_DIR, name), 'utf8') === content, `clients/ts/${name} is out of date: run npm run client:generate`).toBe(true)
    }
  })

  describe('against a running server', () => {
    let ctx: TestContext
    let baseUrl: string
    beforeAll(async () => {
      ctx = await createTestApp()
      await ctx.app.listen({ port: 0, host: '127.0.0.1' })
      baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
    })
    afterAll(() => ctx.close())

    it('logs in, browses the catalogue and reads the wallet with typed calls', async () => {
      const { user } = await createUser(ctx)
      const session: { token?: string } = {}
      const api = createMarketplaceClient({ baseUrl, accessToken: () => session.token })

      const login = await api.POST('/api/v1/auth/login', { body: { email: user.email, password: DEFAULT_PASSWORD } })
      expect(login.response.status).toBe(200)
      session.token = login.data?.data.accessToken
      expect(typeof session.token).toBe('string')

      const services = await api.GET('/api/v1/services', { params: { query: { limit: 5, sortBy: 'createdAt' } } })
      expect(services.response.status).toBe(200)
      expect(services.data?.data.pagination.limit).toBe(5)

      const wallet = await api.GET('/api/v1/wallet')
      expect(wallet.response.status).toBe(200)
      expect(wallet.data?.data).toEqual({ balance: 0, escrow: 0, pendingPayouts: 0, clearing: 0, nextClearingAt: null, currency: 'USD' })
    })

    it('answers errors in the typed envelope', async () => {
      const api = createMarketplaceClient({ baseUrl })
      const refused = await api.GET('/api/v1/wallet')
      expect(refused.response.status).toBe(401)
      expect(refused.error).toMatchObject({ success: false, error: { code: 'UNAUTHENTICATED' } })
    })
  })

  describe('installed as a package by another project', () => {
    const ROOT = join(CLIENT_DIR, '..', '..')
    const run = promisify(execFile)
    const clientManifest = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> }
    let project: string
    let ctx: TestContext
    let baseUrl: string

    /**
     * The project's lockfile names the packed client and, for its runtime dependencies, the
     * versions and integrity this repository's lockfile holds: `npm ci --offline` then takes them
     * from npm's cache (filled by this repository's own install), never from the network.
     */
    function lockfileFor(tarball: string, integrity: string): object {
      const ours = (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, Record<string, unknown>> }).packages
      const packages: Record<string, object> = {
        '': { name: 'client-consumer', dependencies: { [clientManifest.name]: `file:${tarball}` } },
        [`node_modules/${clientManifest.name}`]: { version: clientManifest.version, resolved: `file:${tarball}`, integrity, license: 'MIT', dependencies: clientManifest.dependencies },
      }
      const pending = Object.keys(clientManifest.dependencies)
      for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
        const entry = ours[`node_modules/${name}`]
        if (!entry) throw new Error(`${name}, a dependency of the client, is not in package-lock.json`)
        const { dev: _dev, devOptional: _devOptional, ...kept } = entry
        packages[`node_modules/${name}`] = kept
        pending.push(...Object.keys((entry.dependencies as Record<string, string> | undefined) ?? {}))
      }
      return { name: 'client-consumer', lockfileVersion: 3, requires: true, packages }
    }

    /** The first TypeScript block of the package's README, as a user would paste it. */
    const readmeSnippet = () => /```ts\n([\s\S]*?)```/.exec(readFileSync(join(CLIENT_DIR, 'README.md'), 'utf8'))![1]!

    /** Calls the API through the installed package; checked by tsc, run by tsx as a user would. */
    const PROGRAM = [
      "import { createMarketplaceClient } from '@marketplace-api/client'",
      '',
      'const api = createMarketplaceClient({ baseUrl: process.env.API_URL! })',
      "const email = process.env.EMAIL!",
      "const registered = await api.POST('/api/v1/auth/register', { body: { email, password: 'Secret123', fullName: 'Package User' } })",
      "const early = await api.POST('/api/v1/auth/login', { body: { email, password: 'Secret123' } })",
      "const categories = await api.GET('/api/v1/categories')",
      'const id: string | undefined = registered.data?.data.id',
      'console.log(JSON.stringify({ registered: registered.response.status, id, early: early.response.status, earlyCode: early.error?.error.code, categories: categories.response.status, tree: categories.data?.data }))',
      '',
      'export function unknownPath() {',
      '  // @ts-expect-error: a path the API does not have is refused by the compiler (so the types are not `any`)',
      "  return api.GET('/api/v1/no-such-path')",
      '}',
      '',
    ].join('\n')

    beforeAll(async () => {
      project = mkdtempSync(join(tmpdir(), 'marketplace-client-consumer-'))
      const vendor = join(project, 'vendor')
      mkdirSync(vendor)
      // `npm pack` runs the package's `prepare` script, which builds dist/: what a registry or a path install would get.
      await run('npm', ['pack', '--pack-destination', vendor], { cwd: CLIENT_DIR })
      const [file] = readdirSync(vendor)
      const tarball = `vendor/${file!}`
      const integrity = `sha512-${createHash('sha512').update(readFileSync(join(project, tarball))).digest('base64')}`
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'client-consumer', private: true, type: 'module', dependencies: { [clientManifest.name]: `file:${tarball}` } }))
      writeFileSync(join(project, 'package-lock.json'), JSON.stringify(lockfileFor(tarball, integrity)))
      writeFileSync(join(project, 'program.ts'), PROGRAM)
      writeFileSync(join(project, 'readme.ts'), readmeSnippet())
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          // skipLibCheck keeps the check fast; `@ts-expect-error` in the program fails if the package's types did not load.
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')] },
          include: ['program.ts', 'readme.ts'],
        }),
      )
      await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: project })

      ctx = await createTestApp()
      await ctx.app.listen({ port: 0, host: '127.0.0.1' })
      baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
    }, 240_000)
    afterAll(async () => {
      await ctx?.close()
      if (project) rmSync(project, { recursive: true, force: true })
    })

    it('ships built JavaScript and declarations, and depends on openapi-fetch', () => {
      const installed = join(project, 'node_modules', ...clientManifest.name.split('/'))
      expect(readdirSync(join(installed, 'dist')).sort()).toEqual(['index.d.ts', 'index.js', 'schema.d.ts', 'schema.js'])
      const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
      expect(manifest).toMatchObject({ type: 'module', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } }, dependencies: { 'openapi-fetch': expect.any(String) } })
      expect(readdirSync(join(project, 'node_modules'))).toContain('openapi-fetch')
    })

    it('type-checks a program and the README snippet that use it (tsc)', async () => {
      await expect(run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project])).resolves.toBeDefined()
    }, 120_000)

    it('makes real calls from that project against a running server (tsx)', async () => {
      const email = `${unique('pkg')}@example.test`
      const { stdout } = await run(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'program.ts'], { cwd: project, env: { ...process.env, API_URL: baseUrl, EMAIL: email } })
      const result = JSON.parse(stdout)
      expect(result).toMatchObject({ registered: 201, early: 401, earlyCode: 'ACCOUNT_NOT_ACTIVATED', categories: 200, tree: expect.any(Array) })
      const [row] = await ctx.database.db.select().from(users).where(eq(users.email, email))
      expect(row).toMatchObject({ id: result.id, fullName: 'Package User', isActive: false })
    }, 60_000)
  })
})
