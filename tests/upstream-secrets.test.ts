import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";

/**
 * Providers sometimes quote the key they were sent in an error ("Incorrect API key provided: sk-…"), or the
 * whole Authorization header. That text reaches the caller (`provider_message`), the logs and the
 * generation's attempts; the key must not.
 */
const operatorKey = "sk-operator-secret-0123456789abcdef";
let gw: TestGateway;
let provider: Server;
let key: string;
let logs = "";

beforeAll(async () => {
  provider = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const quoted = `Incorrect API key provided: ${operatorKey}. You sent: Authorization: ${req.headers.authorization}`;
      // A refusal (401, not retried) and a failure (500, retried elsewhere, here nowhere) both quote it.
      const status = req.url?.includes("refuse") ? 401 : 500;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: quoted, type: "invalid_request_error" } }));
    });
  });
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  const port = (provider.address() as AddressInfo).port;
  const endpoint = (path: string) => ({ provider: path, upstream_model: "m", pricing: { prompt: "0.000001", completion: "0.000001" } });
  const logStream = new PassThrough();
  logStream.on("data", (chunk: Buffer) => (logs += chunk.toString("utf8")));
  gw = await startTestGateway(
    {
      ...(await catalogEnv({
        providers: [
          { slug: "refuse", name: "Refuses", adapter: "openai-compatible", base_url: `http://127.0.0.1:${port}/refuse/v1`, api_key_env: "REFUSE_KEY" },
          { slug: "fail", name: "Fails", adapter: "openai-compatible", base_url: `http://127.0.0.1:${port}/fail/v1`, api_key_env: "FAIL_KEY" },
        ],
        models: [
          { id: "quote/refused", name: "Refused", context_length: 8000, endpoints: [endpoint("refuse")] },
          { id: "quote/failed", name: "Failed", context_length: 8000, endpoints: [endpoint("fail")] },
        ],
      })),
      REFUSE_KEY: operatorKey,
      FAIL_KEY: operatorKey,
    },
    { logs: logStream },
  );
  key = String((await gw.call("POST", "/keys", { body: { name: "quotes" } })).body.key);
});
afterAll(async () => {
  await gw?.stop();
  await new Promise((resolve) => provider?.close(resolve));
});

describe("a provider's error that quotes its key", () => {
  it.each([
    ["quote/refused", 400, false],
    ["quote/failed", 502, false],
    ["quote/refused", 400, true],
  ])("reaches neither the caller nor the logs with the key (%s: %i, streamed: %s)", async (model, status, stream) => {
    const res = await gw.call("POST", "/chat/completions", { key, body: { model, stream, messages: [{ role: "user", content: "hi" }] } });
    expect(res.status).toBe(status);
    const text = JSON.stringify(res.body);
    expect(text).toContain("Incorrect API key provided: [redacted]");
    expect(text).not.toContain(operatorKey);
    await eventually(async () => logs.includes("upstream attempt failed"), 5000);
    expect(logs).toContain("[redacted]");
    expect(logs).not.toContain(operatorKey);
  });
});
