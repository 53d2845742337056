import { fileURLToPath } from 'node:url'
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// The console is served by the API at /console (src/http/console.ts); `vite` alone serves it
// for development and sends API calls to a server on port 8000.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, reportCompressedSize: false, chunkSizeWarningLimit: 1024 },
  server: { proxy: { '/api': 'http://localhost:8000' } },
})
