// The renderer's build: React, bundled into dist/renderer, which the agent serves
// in browser mode and the desktop app loads from its package.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { TOKENS_CSS } from '../src/format/tokens.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'renderer');

/** The look shared with the service's pages (src/format/tokens.ts), as the stylesheet `virtual:ferry-tokens.css`. */
const TOKENS_ID = 'virtual:ferry-tokens.css';
const tokens: Plugin = {
  name: 'ferry-tokens',
  resolveId: (id) => (id === TOKENS_ID ? `\0${TOKENS_ID}` : undefined),
  load: (id) => (id === `\0${TOKENS_ID}` ? TOKENS_CSS : undefined),
};

export default defineConfig({
  root,
  base: './',
  plugins: [react(), tokens],
  logLevel: 'warn',
  build: { outDir: path.join(root, '..', 'dist', 'renderer'), emptyOutDir: true, target: 'es2022', sourcemap: false },
});
