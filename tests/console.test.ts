import { mkdir } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, launchChromium, pageProblems } from "./support/browser.js";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * The operator console in a real Chromium, through the router of a whole gateway: sign in, make a key, chat in
 * the playground against a fake provider, find that generation in Activity and its cost on the Overview,
 * disable the key. Each page's screenshot at 1440×900 goes to docs/console/.
 */
const shots = new URL("../docs/console/", import.meta.url);
let gw: TestGateway;
let provider: FakeProvider;
let browser: Browser;
let page: Page;
let problems: string[];
let consoleUrl: string;
let secret: string;
let generationId: string;
let cost: string;

beforeAll(async () => {
  if (browserMissing) return;
  provider = await startFakeProvider("alpha");
  gw = await startTestGateway({
    ...(await catalogEnv({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: provider.baseUrl, api_key_env: "ALPHA_KEY" }],
      models: [
        { id: "chat/ok", name: "Chat OK", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.00001", completion: "0.00003" } }] },
        { id: "chat/other", name: "Chat Other", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.000002", completion: "0.000004" } }] },
      ],
    })),
    ALPHA_KEY: "alpha-secret",
  });
  // A workspace that keeps prompts and answers, so the detail drawer has them to show.
  const workspace = await gw.call("POST", "/workspaces", { body: { name: "Console", slug: "console", is_observability_io_logging_enabled: true, io_logging_sampling_rate: 1 } });
  expect(workspace.status).toBe(201);
  await mkdir(shots, { recursive: true });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  problems = pageProblems(page);
  consoleUrl = `${gw.baseUrl}/console/`;
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.stop();
  await provider?.stop();
});

const shoot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, shots).pathname });
const open = async (path: string) => {
  await page.goto(`${consoleUrl}#/${path}`);
  await page.getByRole("heading", { level: 1 }).waitFor();
};

describe.skipIf(browserMissing)("operator console", { timeout: 60_000 }, () => {
  it("is served with a strict policy and refuses a wrong or non-management key with a clear message", async () => {
    const res = await fetch(`${gw.baseUrl}/console`);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");

    await page.goto(consoleUrl);
    await shoot("sign-in");
    await page.getByLabel("Management key").fill("sk-sy-v1-wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("The key was not accepted: it is wrong, expired or disabled.");

    const inference = await gw.call("POST", "/keys", { body: { name: "not for the console" } });
    await page.getByLabel("Management key").fill(String(inference.body.key));
    await page.getByLabel("Management key").press("Enter");
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("That is an inference key. The console needs a management key.");

    await page.getByLabel("Management key").fill(bootstrapKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    // The key stays in this tab's sessionStorage: never in the URL, a cookie or localStorage.
    expect(page.url()).not.toContain(bootstrapKey);
    expect(await page.evaluate("[document.cookie, JSON.stringify(localStorage)]")).toEqual(["", "{}"]);
  });

  it("creates a key and shows its secret once", async () => {
    await open("keys");
    // By keyboard: the dialog opens with the focus in it.
    await page.getByRole("button", { name: "Create key" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Create key" });
    await expect.poll(() => page.evaluate("document.activeElement?.closest('dialog')?.getAttribute('aria-labelledby') ?? null")).not.toBeNull();
    await dialog.getByLabel("Name").fill("playground");
    await dialog.getByLabel("Spending limit (USD)").fill("2");
    await dialog.getByLabel("Workspace").selectOption({ label: "Console" });
    await dialog.getByRole("button", { name: "Create" }).click();
    await dialog.getByText("Copy this secret now: it is not shown again.").waitFor();
    secret = (await dialog.locator(".secret code").textContent())!.trim();
    expect(secret).toMatch(/^sk-sy-v1-[0-9a-f]+$/);
    await shoot("keys-created");
    await dialog.getByRole("button", { name: "Done" }).click();
    await page.getByRole("button", { name: "Edit playground" }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await shoot("keys");
  });

  it("streams a playground chat with the new key and shows its cost and generation", async () => {
    await open("playground");
    await page.getByLabel("Model").selectOption("chat/ok");
    await page.getByLabel("Inference key").fill(secret);
    await page.getByLabel("Message").fill("Say hello");
    await page.getByRole("button", { name: "Send" }).click();
    const last = page.locator("dl[aria-label='Last generation']");
    await last.waitFor();
    generationId = (await last.getByRole("link").textContent())!.trim();
    expect(generationId).toMatch(/^gen-/);
    cost = (await last.locator("xpath=.//dt[normalize-space()='Cost']/following-sibling::dd[1]").textContent())!.trim();
    // 12 prompt tokens at $0.00001 and 5 completion tokens at $0.00003, as the fake provider reports.
    expect(cost).toBe("$0.00027");
    await shoot("playground");
  });

  it("lists that generation in Activity without a reload and opens its detail", async () => {
    await open("activity");
    const details = page.getByRole("button", { name: `Details of ${generationId}` });
    await details.waitFor({ timeout: 15_000 });
    await details.click();
    const drawer = page.getByRole("dialog", { name: `Generation ${generationId}` });
    await drawer.getByText("Say hello").first().waitFor();
    expect(await drawer.textContent()).toContain(cost);
    await shoot("activity-detail");
    await drawer.getByRole("button", { name: "Close" }).click();
    await shoot("activity");
  });

  it("shows the generation's cost on the Overview", async () => {
    await open("overview");
    const spend = page.locator(".tile", { has: page.locator(".label", { hasText: /^Spend$/ }) }).locator(".value");
    await expect.poll(async () => (await spend.textContent())?.trim(), { timeout: 15_000 }).toBe(cost);
    await page.locator(".chart canvas").first().waitFor();
    await shoot("overview");
  });

  it("shows the catalog with its providers' keys and the guardrails and presets", async () => {
    await gw.call("POST", "/guardrails", { body: { name: "Alpha only", allowed_providers: ["alpha"], limit_usd: 50, reset_interval: "monthly" } });
    await gw.call("POST", "/presets/support-bot/chat/completions", { body: { model: "chat/ok", temperature: 0.2, messages: [{ role: "system", content: "Be brief." }] } });
    await open("models");
    await page.getByRole("table", { name: "Providers" }).getByText("Key configured").waitFor();
    await page.getByRole("table", { name: "Models" }).getByText("chat/ok").waitFor();
    await shoot("models");
    await open("guardrails");
    await page.getByRole("table", { name: "Guardrails" }).getByText("Alpha only").waitFor();
    await page.getByRole("table", { name: "Presets" }).getByText("support-bot", { exact: true }).waitFor();
    await shoot("guardrails");
  });

  it("disables the key and the playground is refused", async () => {
    await open("keys");
    await page.getByRole("button", { name: "Disable playground" }).click();
    await page.getByRole("button", { name: "Enable playground" }).waitFor();
    await open("playground");
    await page.getByLabel("Model").selectOption("chat/ok");
    await page.getByLabel("Inference key").fill(secret);
    await page.getByLabel("Message").fill("Still there?");
    await page.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toBe("The key was not accepted: it is wrong, expired or disabled.");
  });

  it("loaded everything from its own origin without a policy refusal or a script error", () => {
    // The wrong keys' 401 answers are the only failed loads the browser reports.
    expect(problems.filter((p) => !p.includes("status of 401"))).toEqual([]);
  });
});

describe("console switch", { timeout: 120_000 }, () => {
  it("is not served when CONSOLE_ENABLED=false", async () => {
    const off = await startTestGateway({ CONSOLE_ENABLED: "false" });
    try {
      const res = await fetch(`${off.baseUrl}/console`);
      expect(res.status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});
