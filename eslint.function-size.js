/**
 * The limit on a function's length in src/ (tests aside), counted without blank lines and
 * comments. `eslint.config.js` fails at 150 lines; `npm run lint:functions` warns at 80, the
 * budget of new code (docs/architecture.md, "Function size").
 */
export function functionSize({ severity, max, exempt = [] }) {
  return [
    {
      files: ['src/**/*.ts'],
      ignores: ['**/*.test.ts'],
      rules: { 'max-lines-per-function': [severity, { max, skipBlankLines: true, skipComments: true }] },
    },
    ...(exempt.length > 0 ? [{ files: exempt, rules: { 'max-lines-per-function': 'off' } }] : []),
  ]
}
