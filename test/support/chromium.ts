/**
 * Headless Chromium for the browser tests. `describeWithChromium(name, body)` runs the block
 * when the browser is installed; without it the block is skipped with one console line, unless
 * the CI variable is set: then it fails.
 */
import { accessSync, constants, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { describe, it } from 'vitest';
import { inCi } from './redis-server.js';

/**
 * Where the Debian `chromium` package installs the browser (`.ci/run` installs it); the
 * BREAKWATER_CHROMIUM variable names another binary.
 */
export const CHROMIUM_PATH = process.env.BREAKWATER_CHROMIUM || '/usr/bin/chromium';

/**
 * Flags for a headless run on a CI machine: no sandbox (containers rarely allow one), no GPU,
 * and none of the background traffic (updates, sync, QUIC probes) a test has no use for.
 */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function chromiumInstalled(): boolean {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function missingChromiumMessage(): string {
  return `Chromium is not installed at ${CHROMIUM_PATH}: install the Debian package (apt-get install chromium) to run the browser tests`;
}

/**
 * Launches the system's headless Chromium through playwright-core. Throws when the browser is
 * missing: use it inside {@link describeWithChromium}, which decides whether to skip.
 */
export async function launchChromium(): Promise<Browser> {
  if (!chromiumInstalled()) throw new Error(missingChromiumMessage());
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}

/** Says once per Vitest run (not once per test file) that the browser tests are skipped. */
function announceSkip(): void {
  try {
    writeFileSync(join(tmpdir(), `breakwater-chromium-skipped-${process.ppid}`), '', {
      flag: 'wx',
    });
  } catch {
    return;
  }
  console.warn(`\n!!! SKIPPED browser tests: ${missingChromiumMessage()} !!!\n`);
}

/**
 * A describe block of browser tests. Without Chromium the block is skipped with one loud
 * console line (a file's hooks do not run when all its tests are skipped), or fails when the CI
 * variable is set: the browser tests are mandatory there.
 */
export function describeWithChromium(name: string, body: () => void): void {
  if (chromiumInstalled()) {
    describe(name, body);
    return;
  }
  if (inCi()) {
    describe(name, () => {
      it('needs Chromium (CI is set, so this fails instead of skipping)', () => {
        throw new Error(missingChromiumMessage());
      });
    });
    return;
  }
  announceSkip();
  // The other skip the project allows, besides redis-server's: no browser on a developer's machine.
  describe.skip(name, body);
}
