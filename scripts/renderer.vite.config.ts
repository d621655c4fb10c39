// The renderer's build: React, bundled into dist/renderer, which the agent serves
// in browser mode and the desktop app loads from its package.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'renderer');

export default defineConfig({
  root,
  base: './',
  plugins: [react()],
  logLevel: 'warn',
  build: { outDir: path.join(root, '..', 'dist', 'renderer'), emptyOutDir: true, target: 'es2022', sourcemap: false },
});
