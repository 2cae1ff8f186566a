import { createServer } from "node:http";
import { holdResponse } from "@switchyard/contracts";
import { createInternalClient, createServiceSigner, HttpError, ServiceUnavailableError } from "@switchyard/runtime";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * A key changed in identity's database without the router hearing of it (a write the standalone gateway
 * does not see commit): the router still lets its next request through, and identity refuses the spend
 * hold with the 401 the router itself would have given.
 */
const internalSecret = "keys-revoked-standalone-internal-secret-0123456789";
let gw: TestGateway;
let db: pg.Client;

beforeAll(async () => {
  gw = await startTestGateway({ ...(await catalogEnv()), SWITCHYARD_INTERNAL_SECRET: internalSecret });
  db = new pg.Client({ connectionString: gw.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await gw?.stop();
});

const chat = (key: string) => gw.call("POST", "/chat/completions", { key, body: { model: "vendor/a", messages: [{ role: "user", content: "hi" }] } });

/** A key the router has seen, and keeps in its cache. */
async function usedKey(): Promise<{ key: string; hash: string }> {
  const created = await gw.call("POST", "/keys", { body: { name: "revoked behind the router" } });
  const key = created.body.key as string;
  await chat(key);
  return { key, hash: String(created.body.data?.hash) };
}

describe.runIf(testEnv.databaseUrl)("a key revoked behind the standalone router's back", () => {
  it("is refused with 401 and the router's message when it was deleted, disabled or expired", async () => {
    const cases = [
      { change: `DELETE FROM identity.api_keys WHERE hash = $1`, message: "Invalid API key" },
      { change: `UPDATE identity.api_keys SET disabled = true WHERE hash = $1`, message: "API key is disabled" },
      { change: `UPDATE identity.api_keys SET expires_at = now() - interval '1 second' WHERE hash = $1`, message: "API key has expired" },
    ];
    for (const { change, message } of cases) {
      const { key, hash } = await usedKey();
      await db.query(change, [hash]);
      const refused = await chat(key);
      expect({ status: refused.status, body: refused.body }).toEqual({ status: 401, body: { error: { code: 401, message } } });
    }
  });

  it("tells a refused key from a refused service token on identity's internal hold route", async () => {
    const identity = await listenLocal(createServer(gw.standalone.identity.app));
    try {
      const url = identity.baseUrl.replace(/\/v1$/, "");
      const { hash } = await usedKey();
      await db.query(`UPDATE identity.api_keys SET disabled = true WHERE hash = $1`, [hash]);
      const hold = { generation_id: "gen-revoked-standalone", key_hash: hash, amount_usd: "0.001", is_byok: false, ttl_ms: 60_000 };
      const asked = createInternalClient(url, createServiceSigner(internalSecret, "inference")).post("/internal/holds", hold, holdResponse);
      const refusal = await asked.catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(HttpError);
      expect(refusal).toMatchObject({ status: 401, message: "API key is disabled" });
      // A token identity does not accept is the deployment's fault, not the client's key: never a 401 to the client.
      const wrongSecret = createServiceSigner("another-internal-secret-0123456789abcdef", "inference");
      const unsigned = await createInternalClient(url, wrongSecret, 5000, { retryMs: 0 }).post("/internal/holds", hold, holdResponse).catch((error: unknown) => error);
      expect(unsigned).toBeInstanceOf(ServiceUnavailableError);
      expect(unsigned).not.toBeInstanceOf(HttpError);
    } finally {
      await identity.stop();
    }
  });
});
