import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startFaultProxy, type FaultProxy } from "./support/fault-proxy.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { spendCatalog } from "./support/spend-fixture.js";
import { gatewayDriver, spendHelpers } from "./support/spend-scenarios.js";

/**
 * The gateway's Postgres behind a proxy this test cuts: with the database down, no request reaches a
 * provider, whether its key has a limit or not, because no durable hold can be written for it.
 */
let database: TestDatabase;
let proxy: FaultProxy;
let alpha: FakeProvider;
let gw: TestGateway;
let h: ReturnType<typeof spendHelpers>;

// Only a Postgres server can be put behind a proxy; embedded PGlite lives in the test's own process.
describe.skipIf(!testEnv.databaseUrl)("spend when Postgres is down", () => {
  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url!);
    proxy = await startFaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    alpha = await startFakeProvider("alpha");
    gw = await startTestGateway({ ...(await catalogEnv(spendCatalog(alpha.baseUrl))), DATABASE_URL: url.toString() });
    h = spendHelpers(gatewayDriver(gw, alpha));
  }, 60_000);

  afterAll(async () => {
    await proxy?.restore();
    await gw?.stop();
    await alpha?.stop();
    await proxy?.stop();
    await database?.drop();
  });

  it("answers 503 in the error envelope without calling the provider for a key without a limit, and serves again when it is back", async () => {
    const { key } = await h.newKey(); // no limit
    // Served once, so the router knows the key and the catalog its model: only the hold needs the database.
    expect((await h.chat(key, "spend/cent")).status).toBe(200);
    const before = alpha.requests.length;

    await proxy.cut();
    try {
      for (let i = 0; i < 3; i++) {
        const refused = await h.chat(key, "spend/cent");
        expect(refused.status).toBe(503);
        // Whichever needs the database first refuses: the key's lookup (a settled charge drops it from the
        // router's cache) or its spend hold.
        expect(refused.body.error).toMatchObject({ code: 503, message: expect.stringMatching(/Spend limits cannot be checked|Authentication is temporarily unavailable/) });
      }
      expect(alpha.requests.length).toBe(before);
    } finally {
      await proxy.restore();
    }
    await eventually(async () => (await h.chat(key, "spend/cent")).status === 200, 20_000);
    expect(alpha.requests.length).toBeGreaterThan(before);
  }, 60_000);
});
