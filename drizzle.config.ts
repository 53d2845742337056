import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  // Every module's tables: adding a module needs no change here.
  schema: ['./src/modules/*/*.table.ts', './src/platform/*/*.table.ts'],
  out: './migrations',
  casing: 'snake_case',
})
