import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrapKey, startTestGateway, type TestGateway } from "./support/gateway.js";

/** Updates whose fields are all optional: a body that is not JSON must not read as an empty update. */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.stop();
});

/** A PATCH sent as curl sends `-d` without a content type, or with the one given. */
async function patch(path: string, body: string | undefined, contentType?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${bootstrapKey}` };
  if (contentType) headers["content-type"] = contentType;
  const res = await fetch(`${gw.apiUrl}${path}`, { method: "PATCH", headers, ...(body !== undefined ? { body } : {}) });
  return { status: res.status, body: (await res.json()) as { error?: { message: string }; data?: Record<string, unknown> } };
}

describe("updates sent without a JSON content type", () => {
  it("refuses a key update sent as a form or as text, and changes nothing", async () => {
    const created = await gw.call("POST", "/keys", { body: { name: "kept" } });
    const hash = String(created.body.data!.hash);
    for (const contentType of ["application/x-www-form-urlencoded", "text/plain"]) {
      const res = await patch(`/keys/${hash}`, '{"disabled":true,"name":"changed"}', contentType);
      expect(res.status, contentType).toBe(400);
      expect(res.body.error?.message).toBe("Invalid body: send it as JSON with Content-Type: application/json");
    }
    const after = await gw.call("GET", `/keys/${hash}`);
    expect(after.body.data).toMatchObject({ name: "kept", disabled: false });
  });

  it("still takes an update with no body as an update of nothing, and a JSON one as asked", async () => {
    const created = await gw.call("POST", "/keys", { body: { name: "plain" } });
    const hash = String(created.body.data!.hash);
    expect((await patch(`/keys/${hash}`, undefined)).status).toBe(200);
    const res = await patch(`/keys/${hash}`, '{"disabled":true}', "application/json");
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: "plain", disabled: true });
  });

  it("refuses a guardrail update sent as text", async () => {
    const created = await gw.call("POST", "/guardrails", { body: { name: "g", limit_usd: 5, reset_interval: "monthly" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = String(created.body.data!.id);
    const res = await patch(`/guardrails/${id}`, '{"limit_usd":1}', "text/plain");
    expect(res.status).toBe(400);
    expect((await gw.call("GET", `/guardrails/${id}`)).body.data).toMatchObject({ limit_usd: 5 });
  });
});
