import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenRouter } from "@openrouter/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startProcess, type TestProcess } from "./support/process.js";

/** `npm start` as a newcomer runs it: no environment, embedded PGlite, a generated management key. */
let proc: TestProcess;
let dataDir: string;
let apiUrl: string;
let managementKey: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-standalone-"));
  proc = startProcess("services/standalone/dist/main.js", { PORT: "0", SWITCHYARD_DATA_DIR: dataDir });
  managementKey = (await proc.waitFor(/^\s+(sk-sy-v1-[0-9a-f]{72})$/m, 40_000))[1]!;
  const port = (await proc.waitFor(/"port":(\d+)/, 20_000))[1];
  apiUrl = `http://127.0.0.1:${port}/api/v1`;
}, 60_000);

afterAll(async () => {
  expect(await proc?.stop()).toBe(0);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("standalone process", () => {
  it("prints a working management key once and disables keys on request", async () => {
    const admin = new OpenRouter({ apiKey: managementKey, serverURL: apiUrl });
    const created = await admin.apiKeys.create({ requestBody: { name: "app" } });
    const app = new OpenRouter({ apiKey: created.key, serverURL: apiUrl });
    expect((await app.apiKeys.getCurrentKeyMetadata()).data.label).toBe(created.data.label);
    await admin.apiKeys.update({ hash: created.data.hash, requestBody: { disabled: true } });
    const took = await eventually(async () => (await fetch(`${apiUrl}/key`, { headers: { authorization: `Bearer ${created.key}` } })).status === 401);
    expect(took).toBeLessThan(1000);
    expect(proc.output().match(/sk-sy-v1-[0-9a-f]{72}/g)).toHaveLength(1);
  });

  it("changes a guardrail's budget and keys on its one embedded connection, where catalog's change waits on identity's write", async () => {
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        // A change that waited on itself would never answer: the test fails instead of hanging.
        signal: AbortSignal.timeout(10_000),
      });
    const key = (await (await call("POST", "/keys", { name: "budgeted" })).json()) as { data: { hash: string } };
    const created = await call("POST", "/guardrails", { name: "a dollar a day", limit_usd: 1, reset_interval: "daily" });
    expect(created.status).toBe(201);
    const { data } = (await created.json()) as { data: { id: string } };
    expect((await call("POST", `/guardrails/${data.id}/assignments/keys`, { key_hashes: [key.data.hash] })).status).toBe(200);
    expect((await call("PATCH", `/guardrails/${data.id}`, { limit_usd: 2 })).status).toBe(200);
    expect((await call("DELETE", `/guardrails/${data.id}`)).status).toBe(200);
  });
});
