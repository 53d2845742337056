import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules', 'data', 'migrations', 'coverage', '.tmp'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
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
      'no-restricted-syntax': ['error', { selector: 'MemberExpression[object.name="process"][property.name="env"]', message: 'Only src/config.ts reads process.env.' }],
    },
  },
  {
    files: ['src/config.ts', 'test/**', 'scripts/**', 'vitest.config.ts', 'drizzle.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
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
              { regex: String.raw`^\.\./(?!\.)[^/]+/(?![^/]*\.module\.ts$)`, message: "Another module is reached only through its public <name>.module.ts (add what you need to that module's exports)." },
              { group: ['**/container.ts', '**/app.ts'], message: 'Modules receive their dependencies; they never import the container or the app.' },
            ],
          },
        ],
      },
    },
    // A table may reference another module's table for a foreign key: a schema fact, not a call.
    {
      files: ['src/modules/*/*.table.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: String.raw`^\.\./(?!\.)[^/]+/(?![^/]*\.(module|table)\.ts$)`, message: 'A table file imports only other tables (foreign keys).' }] }] },
    },
  ]
}
