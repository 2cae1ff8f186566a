import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { startTestNats, type TestNats } from "./support/nats.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { chargesOnceHoweverDelivered, gatewayDriver, spendHelpers } from "./support/spend-scenarios.js";

/** Spend over a NATS of this test's own, which it stops and starts: usage arrives once, whatever the transport does. */
let nats: TestNats;
let gw: TestGateway;
let alpha: FakeProvider;
const namespace = `spend${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  nats = await startTestNats({ private: true });
  alpha = await startFakeProvider("alpha");
  gw = await startTestGateway({ ...(await catalogEnv(spendCatalog(alpha.baseUrl))), NATS_URL: nats.url, NATS_NAMESPACE: namespace });
  h = spendHelpers(gatewayDriver(gw, alpha));
}, 30_000);
afterAll(async () => {
  await gw?.stop();
  await alpha?.stop();
  await nats?.stop();
});

let h: ReturnType<typeof spendHelpers>;
const usageOf = async (hash: string) => (await h.keyRecord(hash)).usage;

describe("spend when NATS fails", () => {
  it("serves 20 completions while NATS is down and applies their usage exactly once when it returns", async () => {
    const { key, hash } = await h.newKey({ limit: 1 });
    await nats.kill!();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => h.chat(key, "spend/cent")),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await usageOf(hash)).toBe(0); // the charges wait in the outbox; their holds still count meanwhile
    expect((await gw.call("GET", `/keys/${hash}`)).body.data?.limit_remaining).toBe(1);

    await nats.restart!();
    await eventually(async () => ((await usageOf(hash)) ?? 0) >= 0.2, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await usageOf(hash)).toBe(0.2);
  }, 60_000);

  it("applies a charge once however often it is delivered or reported", () => chargesOnceHoweverDelivered(gatewayDriver(gw, alpha), { url: nats.url, namespace }), 30_000);
});

describe("keys when NATS fails", () => {
  it("refuses a disabled key on the next request, though the change's event waits in the outbox", async () => {
    const { key, hash } = await h.newKey();
    expect((await h.chat(key, "spend/cent")).status).toBe(200); // the router now caches the key
    await nats.kill!();
    try {
      expect((await gw.call("PATCH", `/keys/${hash}`, { body: { disabled: true } })).status).toBe(200);
      const refused = await h.chat(key, "spend/cent");
      expect(refused.status).toBe(401);
      expect(refused.body.error?.message).toBe("API key is disabled");
      expect((await gw.call("PATCH", `/keys/${hash}`, { body: { disabled: false } })).status).toBe(200);
      expect((await h.chat(key, "spend/cent")).status).toBe(200);
    } finally {
      await nats.restart!();
    }
  }, 30_000);
});
