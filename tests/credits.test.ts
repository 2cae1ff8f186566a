import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { creditsUnderConcurrency, gatewayDriver, spendHelpers, type SpendDriver } from "./support/spend-scenarios.js";

/** The organization's credits: read as OpenRouter answers them, set by the operator, binding every key's holds. */
let gw: TestGateway;
let alpha: FakeProvider;
let driver: SpendDriver;
let h: ReturnType<typeof spendHelpers>;

beforeAll(async () => {
  alpha = await startFakeProvider("alpha");
  gw = await startTestGateway(await catalogEnv(spendCatalog(alpha.baseUrl)));
  driver = gatewayDriver(gw, alpha);
  h = spendHelpers(driver);
});
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
});

const credits = async (key?: string) => {
  const res = await gw.call("GET", "/credits", key ? { key } : {});
  expect(res.status).toBe(200);
  return res.body.data as unknown as { total_credits: number; total_usage: number };
};
const setCredits = (total_credits: unknown, key?: string) => gw.call("PUT", "/credits", { body: { total_credits }, ...(key ? { key } : {}) });

describe("credits", () => {
  it("reads no limit as the largest one, for every key, and answers @openrouter/sdk's credits method, which validates it", async () => {
    const { key } = await h.newKey();
    expect(await credits()).toEqual({ total_credits: 1e9, total_usage: 0 });
    expect(await credits(key)).toEqual({ total_credits: 1e9, total_usage: 0 });
    const sdk = await new OpenRouter({ apiKey: bootstrapKey, serverURL: gw.apiUrl }).credits.getCredits();
    expect(sdk.data).toEqual({ totalCredits: 1e9, totalUsage: 0 });
  });

  it("keeps the credits to the picodollar", async () => {
    expect((await setCredits(1000.123456789012)).status).toBe(200);
    expect((await credits()).total_credits).toBe(1000.123456789012);
    expect((await setCredits(null)).status).toBe(200);
  });

  it("binds every key of the organization: 50 concurrent requests of two unlimited keys get exactly the credits' worth", () =>
    creditsUnderConcurrency(driver));

  it("applies a raised or removed limit to the very next request", async () => {
    const { key } = await h.newKey();
    expect((await setCredits(0.06)).status).toBe(200);
    expect((await h.chat(key, "spend/cent")).status).toBe(200);
    expect((await setCredits(null)).body.data).toMatchObject({ total_credits: 1e9 });
    expect((await h.chat(key, "spend/ninety-cents")).status).toBe(200);
  });

  it("is set by management keys only, with a clear 400 for what it cannot take", async () => {
    const { key } = await h.newKey();
    expect((await setCredits(5, key)).status).toBe(403);
    for (const [body, message] of [
      [{ total_credits: -1 }, /total_credits: must not be negative/],
      [{ total_credits: 2e9 }, /total_credits: must be at most 1000000000/],
      [{ total_credits: "5" }, /total_credits/],
      // Stored to 12 decimal places, 4e-13 would become a limit of 0 that refuses every key.
      [{ total_credits: 4e-13 }, /total_credits: must be a whole number of picodollars/],
      [{}, /total_credits/],
      [{ total_credits: 5, currency: "EUR" }, /currency/],
    ] as const) {
      const res = await gw.call("PUT", "/credits", { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error?.message).toMatch(message);
    }
  });
});
