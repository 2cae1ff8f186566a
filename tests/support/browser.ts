import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { testEnv } from "./config.js";

/** Debian's `chromium` package; `.ci/run` installs it, and no browser is ever downloaded. */
export const chromiumPath = "/usr/bin/chromium";

/** Outside CI a machine without Chromium skips the browser tests; in CI a missing browser is a failure. */
export const browserMissing = !existsSync(chromiumPath) && !testEnv.ci;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
  });
}

/** Everything the page reported as an error: script errors, failed loads and Content-Security-Policy refusals. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  return problems;
}
