import type { Locator } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import type { TestGateway } from "./support/gateway.js";

/** The console's guardrail form refuses, in the form, what the gateway would store but could never mean. */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;

beforeAll(async () => {
  if (browserMissing) return;
  const pricing = { prompt: "0.00001", completion: "0.00003" };
  fixture = await startConsoleFixture(
    (url) => ({
      providers: [
        { slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: url, api_key_env: "ALPHA_KEY" },
        { slug: "beta", name: "Beta", adapter: "openai-compatible", base_url: url, api_key_env: "BETA_KEY" },
      ],
      models: [
        { id: "chat/ok", name: "OK", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
        { id: "chat/free:free", name: "Free", context_length: 8000, endpoints: [{ provider: "beta", upstream_model: "ok", pricing: { prompt: "0", completion: "0" } }] },
      ],
    }),
    { ALPHA_KEY: "alpha-secret", BETA_KEY: "beta-secret" },
  );
  ({ gw, tab } = fixture);
}, 120_000);
afterAll(() => fixture?.stop());

const saved = async () => (await gw.call("GET", "/guardrails")).body.data!.map((g) => g.name);

/** Fills a new guardrail's form and saves it; answers the form's refusal, or null when the dialog closed. */
async function create(fields: Record<string, string>): Promise<string | null> {
  await tab.open("guardrails");
  await tab.page.getByRole("button", { name: "Create guardrail" }).click();
  const dialog = tab.page.getByRole("dialog", { name: "Create guardrail" });
  for (const [label, value] of Object.entries(fields)) {
    const field = dialog.getByLabel(label, { exact: true });
    if (label === "Budget resets") await field.selectOption({ label: value });
    else await field.fill(value);
  }
  await dialog.getByRole("button", { name: "Save" }).click();
  const refusal: Locator = dialog.getByRole("alert");
  await Promise.race([refusal.waitFor(), dialog.waitFor({ state: "hidden" })]);
  if (!(await dialog.isVisible())) return null;
  const text = await refusal.textContent();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  return text;
}

describe.skipIf(browserMissing)("console guardrail form", { timeout: 60_000 }, () => {
  it("refuses a budget written in hexadecimal, saying what it takes", async () => {
    expect(await create({ Name: "hex budget", "Budget (USD)": "0x10", "Budget resets": "Monthly" })).toBe("Budget must be a plain decimal number of dollars, such as 25 or 0.50.");
    expect(await saved()).not.toContain("hex budget");
  });

  it("refuses a provider the gateway does not have", async () => {
    expect(await create({ Name: "unknown provider", "Allowed providers": "alpha, nosuch" })).toBe("Allowed providers: “nosuch” is not a provider of this gateway.");
    expect(await saved()).not.toContain("unknown provider");
  });

  it("refuses a provider both allowed and ignored", async () => {
    expect(await create({ Name: "both ways", "Allowed providers": "alpha, beta", "Ignored providers": "beta" })).toBe(
      "“beta” is both an allowed and an ignored provider: keep it in one list.",
    );
    expect(await saved()).not.toContain("both ways");
  });

  it("refuses a model the gateway does not have, and one both allowed and ignored", async () => {
    expect(await create({ Name: "unknown model", "Ignored models": "chat/nosuch" })).toBe("Ignored models: “chat/nosuch” is not a model of this gateway.");
    expect(await create({ Name: "model both ways", "Allowed models": "chat/ok", "Ignored models": "chat/ok" })).toBe(
      "“chat/ok” is both an allowed and an ignored model: keep it in one list.",
    );
    expect(await saved()).toEqual([]);
  });

  it("saves known providers and models, a base id covering its variants", async () => {
    expect(await create({ Name: "known", "Allowed providers": "alpha, beta", "Allowed models": "chat/ok, chat/free" })).toBeNull();
    expect(await saved()).toEqual(["known"]);
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
