import { accessSync, constants } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Where the Debian `chromium` package installs the browser (`.ci/run` installs it). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

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

/**
 * Launches the system's headless Chromium through playwright-core. Throws (never skips) when
 * the browser is missing, so a machine without it fails the browser tests loudly.
 */
export async function launchChromium(): Promise<Browser> {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: install the Debian package (apt-get install chromium) to run the browser tests.`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}
