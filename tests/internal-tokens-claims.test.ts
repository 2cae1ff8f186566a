import { createServer } from "node:http";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";

/**
 * The signed headers between services, as a process reached directly (bypassing the router) checks them:
 * identity's app of a standalone gateway, on a port of its own, with the deployment's internal secret.
 */
const internalSecret = "internal-tokens-claims-secret-0123456789abcdef";
const key = new TextEncoder().encode(internalSecret);
let gw: TestGateway;
let identity: { baseUrl: string; stop(): Promise<void> };
let me: { hash: string; organizationId: string; workspaceId: string };

beforeAll(async () => {
  gw = await startTestGateway({ ...(await catalogEnv()), SWITCHYARD_INTERNAL_SECRET: internalSecret });
  identity = await listenLocal(createServer(gw.standalone.identity.app));
  const data = (await gw.call("GET", "/key")).body.data!;
  me = { hash: String(data.hash), organizationId: String(data.organization_id), workspaceId: String(data.workspace_id) };
});
afterAll(async () => {
  await identity?.stop();
  await gw?.stop();
});

const url = (path: string) => `${identity.baseUrl.replace(/\/v1$/, "")}${path}`;

/** A service token as a service signs it, with `exp` only when `lifetime` is given. */
async function serviceToken(svc: string, lifetime?: string): Promise<string> {
  const jwt = new SignJWT({ svc }).setProtectedHeader({ alg: "HS256" }).setIssuer(svc).setAudience("switchyard-internal").setIssuedAt();
  return (lifetime ? jwt.setExpirationTime(lifetime) : jwt).sign(key);
}

/** A caller token as the router signs it, with `exp` only when `lifetime` is given. */
async function callerToken(lifetime?: string): Promise<string> {
  const jwt = new SignJWT({ kh: me.hash, org: me.organizationId, ws: me.workspaceId, mgmt: true })
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer("switchyard-router")
    .setAudience("switchyard-services")
    .setIssuedAt();
  return (lifetime ? jwt.setExpirationTime(lifetime) : jwt).sign(key);
}

const release = async (token: string) => {
  const res = await fetch(url("/internal/holds/release"), {
    method: "POST",
    headers: { "content-type": "application/json", "x-switchyard-service": token },
    body: JSON.stringify({ generation_id: "gen-internal-tokens" }),
  });
  return { status: res.status, body: (await res.json()) as unknown };
};

const currentKey = async (token: string) => (await fetch(url("/api/v1/key"), { headers: { "x-switchyard-caller": token } })).status;

describe("internal service tokens", () => {
  it("are accepted from a known service with an expiry", async () => {
    expect((await release(await serviceToken("inference", "60s"))).status).toBe(200);
  });

  it("are refused without an expiry", async () => {
    expect(await release(await serviceToken("inference"))).toEqual({ status: 401, body: { error: { code: 401, message: "Missing or invalid internal service credentials" } } });
  });

  it("are refused when they name a service the gateway does not have", async () => {
    expect((await release(await serviceToken("somebody", "60s"))).status).toBe(401);
  });
});

describe("internal caller tokens", () => {
  it("are accepted with an expiry and refused without one", async () => {
    expect(await currentKey(await callerToken("60s"))).toBe(200);
    expect(await currentKey(await callerToken())).toBe(401);
  });
});
