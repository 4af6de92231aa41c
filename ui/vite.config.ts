/// <reference types="vitest/config" />
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The bundled avatar page (../avatar, A-26) ships inside the UI as `avatar/…`: same origin as the app, so it can live
// in an iframe of the main window and in the detached avatar window, under the app's strict CSP (no remote origin).
const AVATAR_FILES = ['avatar.html', 'avatar.css', 'avatar.js'];
const avatarDir = fileURLToPath(new URL('../avatar/', import.meta.url));
const CONTENT_TYPES: Record<string, string> = { html: 'text/html', css: 'text/css', js: 'text/javascript' };

function bundledAvatar(): Plugin {
  return {
    name: 'hermes-bundled-avatar',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const m = /^\/avatar\/([\w.-]+)$/.exec((req.url ?? '').split('?')[0]);
        if (!m || !AVATAR_FILES.includes(m[1])) return next();
        res.setHeader('Content-Type', CONTENT_TYPES[m[1].split('.').pop() ?? ''] ?? 'application/octet-stream');
        res.end(readFileSync(avatarDir + m[1]));
      });
    },
    generateBundle() {
      for (const f of AVATAR_FILES) {
        this.emitFile({ type: 'asset', fileName: `avatar/${f}`, source: readFileSync(avatarDir + f) });
      }
    },
  };
}

export default defineConfig({
  plugins: [svelte(), bundledAvatar()],
  // Tauri serves the bundle from its own origin; relative paths keep it portable.
  base: './',
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    outDir: 'dist',
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 800,
    // Non-ASCII characters (the ru/zh catalogues, typographic quotes) escaped: an all-ASCII script is kept by
    // JavaScriptCore as 8-bit source, one byte a character, instead of UTF-16 for the whole bundle because of a few
    // thousand characters. Measured only together with the type scale (the launch); on its own it is within the
    // launch's noise (bench/README.md).
    rolldownOptions: { output: { charset: 'ascii' } },
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
