import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { catalogEnv } from "./catalog-fixture.js";
import { testEnv } from "./config.js";
import { startFakeProvider, type FakeProvider } from "./fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./gateway.js";

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

export interface ConsoleTab {
  page: Page;
  /** What `pageProblems` collects for this page. */
  problems: string[];
  /** Loads the console afresh at one page (`keys`, `activity`…) and waits for its heading. */
  open: (path: string) => Promise<void>;
}

/**
 * A tab on the console of the gateway at `baseUrl`, signed in with `key` where the sign-in form leaves it
 * (this tab's sessionStorage), for tests that are about a page rather than about signing in.
 */
export async function consoleTab(browser: Browser, baseUrl: string, key: string): Promise<ConsoleTab> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  // about:blank has no storage of its own.
  await page.addInitScript(`if (location.protocol.startsWith("http")) sessionStorage.setItem("switchyard.management-key", ${JSON.stringify(key)});`);
  const problems = pageProblems(page);
  const open = async (path: string) => {
    // A blank page first, so that opening the page already shown loads it again instead of changing nothing.
    await page.goto("about:blank");
    await page.goto(`${baseUrl}/console/#/${path}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
  };
  return { page, problems, open };
}

export interface ConsoleFixture {
  gw: TestGateway;
  /** The fake provider the catalog's providers point at. */
  provider: FakeProvider;
  browser: Browser;
  /** A tab signed in with the bootstrap management key. */
  tab: ConsoleTab;
  stop(): Promise<void>;
}

/**
 * The gateway on the catalog `catalogOf` makes of a fake provider's address (with `env` beside it), Chromium,
 * and a console tab signed in with the bootstrap key: what each console page's tests start from.
 */
export async function startConsoleFixture(catalogOf: (providerUrl: string) => object, env: Record<string, string> = {}): Promise<ConsoleFixture> {
  const provider = await startFakeProvider("alpha");
  const gw = await startTestGateway({ ...(await catalogEnv(catalogOf(provider.baseUrl))), ...env });
  const browser = await launchChromium();
  const tab = await consoleTab(browser, gw.baseUrl, bootstrapKey);
  return {
    gw,
    provider,
    browser,
    tab,
    async stop() {
      await browser.close();
      await gw.stop();
      await provider.stop();
    },
  };
}
