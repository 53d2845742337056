/**
 * The limit on a function's length in src/ (tests aside), counted without blank lines and
 * comments (docs/architecture.md, "Function size").
 */
export function functionSize({ max }) {
  return [
    {
      files: ['src/**/*.ts'],
      ignores: ['**/*.test.ts'],
      rules: { 'max-lines-per-function': ['error', { max, skipBlankLines: true, skipComments: true }] },
    },
  ]
}
