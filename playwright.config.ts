// The app's end-to-end tests: Debian's Chromium (Playwright cannot download its
// own here) against browser mode, on a real service, store and agent started as
// processes by global-setup.ts.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'test/e2e',
  timeout: 120_000,
  expect: { timeout: 30_000 },
  workers: 1,
  fullyParallel: false,
  reporter: [['list'], ['json', { outputFile: '.test-results/playwright.json' }]],
  globalSetup: './test/e2e/global-setup.ts',
  outputDir: '.test-results/playwright',
  use: {
    browserName: 'chromium',
    viewport: { width: 1100, height: 720 },
    launchOptions: {
      executablePath: process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
});
