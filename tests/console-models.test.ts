import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, startConsoleFixture, type ConsoleFixture, type ConsoleTab } from "./support/browser.js";
import { eventually } from "./support/eventually.js";
import type { TestGateway } from "./support/gateway.js";

/** The console's Models page: each endpoint's health as its measured uptime says, and recovery after an outage. */
let gw: TestGateway;
let fixture: ConsoleFixture | undefined;
let tab: ConsoleTab;
let secret: string;

const pricing = { prompt: "0.00001", completion: "0.00003" };

beforeAll(async () => {
  if (browserMissing) return;
  fixture = await startConsoleFixture(
    (url) => ({
      providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: url, api_key_env: "ALPHA_KEY" }],
      models: [
        { id: "chat/ok", name: "OK", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
        // The fake answers every request for this upstream model with a 500.
        { id: "chat/failing", name: "Failing", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "fail-500", pricing }] },
        { id: "chat/untried", name: "Untried", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing }] },
        {
          id: "chat/two",
          name: "Two of one provider",
          context_length: 8000,
          endpoints: [
            { provider: "alpha", upstream_model: "ok", pricing },
            { provider: "alpha", upstream_model: "ok-large", pricing: { prompt: "0.00002", completion: "0.00006" }, context_length: 4000 },
          ],
        },
      ],
    }),
    { ALPHA_KEY: "alpha-secret", ENDPOINT_STATS_INTERVAL_MS: "250" },
  );
  ({ gw, tab } = fixture);
  secret = String((await gw.call("POST", "/keys", { body: { name: "models" } })).body.key);
}, 120_000);
afterAll(() => fixture?.stop());

const chat = (model: string) =>
  fetch(`${gw.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
  }).then((res) => res.text());

const uptime5m = async (model: string) => {
  const endpoints = (await gw.call("GET", `/models/${model}/endpoints`)).body.data!.endpoints as { uptime_last_5m: number | null }[];
  return endpoints[0]!.uptime_last_5m;
};

async function endpoints(model: string) {
  await tab.page.getByRole("button", { name: `Endpoints of ${model}` }).click();
  const drawer = tab.page.getByRole("dialog", { name: `Endpoints of ${model}` });
  await drawer.locator("section.endpoint").first().waitFor();
  return drawer;
}

describe.skipIf(browserMissing)("console Models", { timeout: 60_000 }, () => {
  it("calls an endpoint healthy, failing or not yet measured as its uptime says", async () => {
    await chat("chat/ok");
    await chat("chat/failing");
    await eventually(async () => (await uptime5m("chat/ok")) === 100 && (await uptime5m("chat/failing")) === 0, 15_000);
    await tab.open("models");
    const badges: Record<string, string | null> = {};
    for (const model of ["chat/ok", "chat/failing", "chat/untried"]) {
      const drawer = await endpoints(model);
      badges[model] = await drawer.locator(".endpoint-head .badge").textContent();
      await drawer.getByRole("button", { name: "Close" }).click();
    }
    expect(badges).toEqual({ "chat/ok": "Healthy", "chat/failing": "Failing", "chat/untried": "No data" });
  });

  it("tells two endpoints of one provider apart, with ids of their own", async () => {
    await tab.open("models");
    const drawer = await endpoints("chat/two");
    const names: (string | null)[] = [];
    for (const section of await drawer.locator("section.endpoint").all()) {
      names.push(await tab.page.locator(`[id="${await section.getAttribute("aria-labelledby")}"]`).textContent());
    }
    expect(names).toEqual(["Alpha · endpoint 1 of 2", "Alpha · endpoint 2 of 2"]);
    const ids = (await tab.page.evaluate(`[...document.querySelectorAll("[id]")].map((e) => e.id)`)) as string[];
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    // `tag` is the provider's slug, the name routing preferences take, not the upstream model.
    const terms = await drawer.locator("section.endpoint").first().locator("dt").allTextContents();
    expect(terms).not.toContain("Upstream");
    expect(terms).toContain("Provider slug");
  });

  it("loads providers and models once the gateway answers again, when Try again is pressed", async () => {
    await tab.page.route(/\/api\/v1\/(providers|models)/, (route) => route.abort());
    await tab.open("models");
    await expect.poll(() => tab.page.getByRole("alert").allTextContents()).toContain("Providers could not be loaded: The gateway could not be reached.");
    await tab.page.unrouteAll();
    await expect.poll(() => tab.page.getByRole("button", { name: "Try again" }).count()).toBe(2);
    for (const list of ["Providers", "Models"]) {
      await tab.page.locator(".load-error", { hasText: `${list} could not be loaded` }).getByRole("button", { name: "Try again" }).click();
    }
    await tab.page.getByRole("table", { name: "Providers" }).getByText("Key configured").waitFor();
    await tab.page.getByRole("table", { name: "Models" }).getByText("chat/ok").waitFor();
    expect(await tab.page.getByRole("alert").count()).toBe(0);
  });

  it("ran without a script error", () => {
    expect(tab.problems.filter((p) => p.startsWith("page error"))).toEqual([]);
  });
});
