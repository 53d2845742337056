import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import { functionSize } from './eslint.function-size.js'

const processEnv = { selector: 'MemberExpression[object.name="process"][property.name="env"]', message: 'Only src/config.ts reads process.env.' }

// A JSON object built in SQL is built from the TypeBox schema of the module that owns the data
// (`jsonObjectSql` in src/db/json-sql.ts), so the schema stays its allow-list; nothing else writes
// json_build_object or jsonb_build_object.
const JSON_BUILDERS = '/json_build_object|jsonb_build_object/i'
const handWrittenJson = [
  { selector: `TemplateElement[value.raw=${JSON_BUILDERS}]`, message: 'Build JSON in SQL with jsonObjectSql(schema, fields) (src/db/json-sql.ts), from the owning module\'s exported schema.' },
  { selector: `Literal[value=${JSON_BUILDERS}]`, message: 'Build JSON in SQL with jsonObjectSql(schema, fields) (src/db/json-sql.ts), from the owning module\'s exported schema.' },
]

export default tseslint.config(
  { ignores: ['node_modules', 'console/dist', 'data', 'migrations', 'coverage', '.tmp', 'clients/ts/schema.ts', 'clients/ts/dist', 'clients/ts/node_modules'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js', 'eslint.function-size.js', '.spectral.mjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      'no-restricted-syntax': ['error', processEnv, ...handWrittenJson],
    },
  },
  {
    files: ['src/config.ts', 'test/**', 'scripts/**', 'vitest.config.ts', 'drizzle.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  // The one writer of JSON objects in SQL (from a schema), its test, and the benchmarks' bare
  // twins, which are hand-written on purpose (and the rule's own pattern, here).
  { files: ['src/db/json-sql.ts', 'src/db/json-sql.test.ts', 'bench/**', 'eslint.config.js'], rules: { 'no-restricted-syntax': ['error', processEnv] } },
  // No function of src/ over 80 lines (blank lines and comments aside), the length that reads
  // without scrolling back: a factory composes use cases kept in files of their own
  // (docs/architecture.md, "Function size").
  ...functionSize({ max: 80 }),
  // The embedded database and the S3 SDK are loaded only where they are configured (decision 0233):
  // src/ imports them statically only as types, and db/pglite.ts is the one file that holds PGlite.
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts', 'src/db/pglite.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@electric-sql/pglite', '@electric-sql/pglite/*', 'drizzle-orm/pglite', 'drizzle-orm/pglite/*', '**/db/pglite.ts', './pglite.ts', '@aws-sdk/*'],
              allowTypeImports: true,
              message: 'Loaded only when configured: import it with `await import()` where it is used (decision 0233).',
            },
          ],
        },
      ],
    },
  },
  // Module boundaries (docs/architecture.md): the layers below modules know no module, and a
  // module reaches another only through its public `<name>.module.ts`.
  ...boundaries(),
)

function boundaries() {
  const noModules = (layer) => ({
    group: ['**/modules/**', '**/container.ts', '**/app.ts'],
    message: `${layer} must not import a module (or the container): modules depend on it, not the other way round.`,
  })
  return [
    { files: ['src/lib/**/*.ts', 'src/access/**/*.ts'], ignores: ['**/*.test.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [noModules('lib/ and access/'), { group: ['**/http/**', '**/platform/**', '**/db/**', 'fastify'], message: 'lib/ and access/ are pure: no HTTP, platform or database.' }] }] } },
    { files: ['src/platform/**/*.ts', 'src/db/**/*.ts'], ignores: ['**/*.test.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [noModules('platform/ and db/'), { group: ['**/http/**'], message: 'platform/ and db/ do not depend on the HTTP layer.' }] }] } },
    { files: ['src/http/**/*.ts'], ignores: ['**/*.test.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [noModules('http/')] }] } },
    {
      files: ['src/modules/**/*.ts'],
      ignores: ['**/*.test.ts', 'src/modules/index.ts', 'src/modules/*/*.table.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                // An allow-list of relative imports for the (flat) module folders: a file of the same module,
                // another module's <name>.module.ts, or a foundation layer. Anything else (another module's
                // internals by any path, a subfolder) is refused.
                regex: String.raw`^\.(?!/[^/]+$)(?!\./[^./][^/]*/[^/]+\.module\.ts$)(?!\./\.\./(lib|http|platform|db|access)/[^.])(?!\./\.\./config\.ts$)`,
                message: "A module imports its own files, another module's public <name>.module.ts, or lib/, http/, platform/, db/, access/ and config.ts; nothing else.",
              },
              { group: ['**/container.ts', '**/app.ts'], message: 'Modules receive their dependencies; they never import the container or the app.' },
            ],
          },
        ],
      },
    },
    // A table may reference another module's table for a foreign key: a schema fact, not a call.
    {
      files: ['src/modules/*/*.table.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          { patterns: [{ regex: String.raw`^\.(?!/[^/]+$)(?!\./[^./][^/]*/[^/]+\.(module|table)\.ts$)(?!\./\.\./(lib|db)/[^.])`, message: 'A table file imports its own module, other tables (foreign keys), lib/ or db/.' }] },
        ],
      },
    },
  ]
}
