import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { servedRoutes } from "./support/service-routes.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ MAX_BODY_BYTES: "2048", RATE_LIMIT_PER_MINUTE: "1000" });
});
afterAll(async () => {
  await gw?.stop();
});

describe("router", () => {
  it("answers health and readiness", async () => {
    expect((await fetch(`${gw.baseUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", checks: { database: "ok" } });
  });

  it("serves the OpenAPI document without a key", async () => {
    const res = await fetch(`${gw.apiUrl}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toMatch(/^3\.1/);
    // Every route a service registers is reachable through the router and in the document, and nothing else is.
    const served = await servedRoutes();
    expect(served.length).toBeGreaterThan(70);
    const documented = Object.entries(doc.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
    expect(documented.sort()).toEqual(served);
  });

  it("gives every response a request id, echoing a sane one", async () => {
    const made = await gw.call("GET", "/key");
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await gw.call("GET", "/key", { headers: { "x-request-id": "trace-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
  });

  it("refuses bodies over the limit with 413 in the envelope", async () => {
    const res = await gw.call("POST", "/keys", { body: { name: "x".repeat(4096) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { code: 413, message: "Request payload too large" } });
  });

  it("answers unknown paths with 404 in the envelope", async () => {
    const res = await gw.call("GET", "/no-such-thing");
    expect(res.status).toBe(404);
    expect(res.body.error?.code).toBe(404);
  });

  it("ignores a forged caller header", async () => {
    const res = await gw.call("GET", "/keys", { key: null, headers: { "x-switchyard-caller": "forged" } });
    expect(res.status).toBe(401);
  });

  it("rate-limits per key with 429 and Retry-After", async () => {
    const made = await gw.call("POST", "/keys", { body: { name: "slow", rate_limit_per_minute: 3 } });
    const key = String(made.body.key);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await gw.call("GET", "/key", { key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await gw.call("GET", "/key", { key });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: 429, message: "Rate limit exceeded" });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(120);
    // Another key is not affected, and raising the key's limit takes effect on the next request.
    expect((await gw.call("GET", "/key")).status).toBe(200);
    await gw.call("PATCH", `/keys/${String(made.body.data?.hash)}`, { body: { rate_limit_per_minute: 100 } });
    await eventually(async () => (await gw.call("GET", "/key", { key })).status === 200);
  });
});
