import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startServiceProcesses, type ServiceProcesses } from "./support/service-processes.js";

let cluster: ServiceProcesses;

beforeAll(async () => {
  // The router hears no key events (a namespace of its own) and keeps keys for ten minutes: the moment
  // before an event arrives, made to last.
  cluster = await startServiceProcesses(["catalog", "inference"], await catalogEnv(), {
    routerEnv: { NATS_NAMESPACE: `deaf${Date.now()}`, AUTH_CACHE_TTL_MS: "600000" },
  });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
});

const call = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${cluster.apiUrl}${path}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
const chat = (key: string) => call("POST", "/chat/completions", key, { model: "vendor/a", messages: [{ role: "user", content: "hi" }] });

/** A key the router has seen (and keeps in its cache until a key event says otherwise). */
async function usedKey(): Promise<{ key: string; hash: string }> {
  const created = (await (await call("POST", "/keys", cluster.bootstrapKey, { name: "revoked" })).json()) as { key: string; data: { hash: string } };
  await (await chat(created.key)).text();
  return { key: created.key, hash: created.data.hash };
}

describe("a key revoked a moment ago, with the router in its own process", () => {
  it("is refused on its next request, before the router hears of it", async () => {
    for (let round = 0; round < 2; round++) {
      const deleted = await usedKey();
      expect((await call("DELETE", `/keys/${deleted.hash}`, cluster.bootstrapKey)).status).toBe(200);
      expect(await chat(deleted.key).then((r) => r.json())).toEqual({ error: { code: 401, message: "Invalid API key" } });
      const disabled = await usedKey();
      expect((await call("PATCH", `/keys/${disabled.hash}`, cluster.bootstrapKey, { disabled: true })).status).toBe(200);
      expect(await chat(disabled.key).then((r) => r.json())).toEqual({ error: { code: 401, message: "API key is disabled" } });
    }
  });
});
