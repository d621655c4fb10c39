// The renderer's build: React, bundled into dist/renderer, which the agent serves
// in browser mode and the desktop app loads from its package.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  plugins: [react()],
  logLevel: 'warn',
  build: { outDir: path.join(here, '..', 'dist', 'renderer'), emptyOutDir: true, target: 'es2022', sourcemap: false },
});
