import { jwtVerify, SignJWT } from "jose";
import { z } from "zod";
import { noteRequest } from "./request-context.js";

/** The header through which the router tells a service who is calling. */
export const callerHeader = "x-switchyard-caller";

/** Who is calling, as the router authenticated them. */
export interface Caller {
  keyHash: string;
  organizationId: string;
  workspaceId: string;
  management: boolean;
}

const claims = z.object({
  kh: z.string(),
  org: z.string(),
  ws: z.string(),
  mgmt: z.boolean(),
});

const issuer = "switchyard-router";
const audience = "switchyard-services";
/** Every token this code signs carries an expiry; one without it is refused, whatever signed it. */
const requiredClaims = ["exp"];

/**
 * Signs caller headers. A token is reused for most of its lifetime so the hot path signs about once
 * a minute per key instead of on every request.
 */
export function createCallerSigner(secret: string, ttlSeconds = 120) {
  const key = new TextEncoder().encode(secret);
  const cache = new Map<string, { token: string; renewAt: number }>();
  return async (caller: Caller): Promise<string> => {
    const cacheKey = `${caller.keyHash}|${caller.workspaceId}|${caller.management}`;
    const hit = cache.get(cacheKey);
    if (hit && hit.renewAt > Date.now()) return hit.token;
    const token = await new SignJWT({ kh: caller.keyHash, org: caller.organizationId, ws: caller.workspaceId, mgmt: caller.management })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(key);
    if (cache.size > 50_000) cache.clear();
    cache.set(cacheKey, { token, renewAt: Date.now() + (ttlSeconds * 1000) / 2 });
    return token;
  };
}

export type CallerSigner = ReturnType<typeof createCallerSigner>;

/**
 * The keys a verifier accepts: the deployment's secret, then the others it is told to accept while the
 * secret is being rotated (SWITCHYARD_INTERNAL_SECRETS_ACCEPTED).
 */
const keysOf = (secret: string, accepted: readonly string[]) => [secret, ...accepted].map((s) => new TextEncoder().encode(s));

/** Verifies with the first key that accepts the token; throws when none does. */
async function verifyWithOneOf(token: string, keys: Uint8Array[], options: Parameters<typeof jwtVerify>[2]) {
  let failure: unknown;
  for (const key of keys) {
    try {
      return await jwtVerify(token, key, options);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/** The request's log line names the key it came with (a hash prefix), in every service it reaches. */
const noted = (caller: Caller): Caller => {
  noteRequest({ key: caller.keyHash.slice(0, 12) });
  return caller;
};

/** Verifies caller headers, remembering tokens already verified until they expire. */
export function createCallerVerifier(secret: string, accepted: readonly string[] = []) {
  const keys = keysOf(secret, accepted);
  const cache = new Map<string, { caller: Caller; expiresAt: number }>();
  return async (token: string): Promise<Caller | undefined> => {
    const hit = cache.get(token);
    if (hit && hit.expiresAt > Date.now()) return noted(hit.caller);
    try {
      const { payload } = await verifyWithOneOf(token, keys, { issuer, audience, algorithms: ["HS256"], requiredClaims });
      const parsed = claims.parse(payload);
      const caller: Caller = { keyHash: parsed.kh, organizationId: parsed.org, workspaceId: parsed.ws, management: parsed.mgmt };
      if (cache.size > 50_000) cache.clear();
      cache.set(token, { caller, expiresAt: (payload.exp ?? 0) * 1000 });
      return noted(caller);
    } catch {
      return undefined;
    }
  };
}

export type CallerVerifier = ReturnType<typeof createCallerVerifier>;

/** Header carrying a service's own identity on `/internal/...` calls. */
export const serviceHeader = "x-switchyard-service";
const serviceAudience = "switchyard-internal";

/**
 * The services that call others' `/internal/...` routes, as they name themselves in their tokens (`svc`). No
 * route is meant for some of them only: each route accepts every one of these, and no other name.
 */
export const serviceNames = ["router", "identity", "catalog", "inference", "media", "storage", "sandbox"] as const;
export type ServiceName = (typeof serviceNames)[number];
const serviceClaims = z.object({ svc: z.enum(serviceNames) });

/** Signs service-to-service tokens, reusing each for half its lifetime. */
export function createServiceSigner(secret: string, service: string, ttlSeconds = 300) {
  // A name no verifier accepts would have every call refused: it is refused here, at start, instead.
  if (!(serviceNames as readonly string[]).includes(service)) throw new Error(`Unknown service name for internal tokens: ${service} (one of ${serviceNames.join(", ")})`);
  const key = new TextEncoder().encode(secret);
  let cached: { token: string; renewAt: number } | undefined;
  return async (): Promise<string> => {
    if (cached && cached.renewAt > Date.now()) return cached.token;
    const token = await new SignJWT({ svc: service })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(service)
      .setAudience(serviceAudience)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(key);
    cached = { token, renewAt: Date.now() + (ttlSeconds * 1000) / 2 };
    return token;
  };
}

export function createServiceVerifier(secret: string, accepted: readonly string[] = []) {
  const keys = keysOf(secret, accepted);
  const cache = new Map<string, { service: ServiceName; expiresAt: number }>();
  return async (token: string): Promise<ServiceName | undefined> => {
    const hit = cache.get(token);
    if (hit && hit.expiresAt > Date.now()) return hit.service;
    try {
      const { payload } = await verifyWithOneOf(token, keys, { audience: serviceAudience, algorithms: ["HS256"], requiredClaims });
      const service = serviceClaims.parse(payload).svc;
      if (cache.size > 1000) cache.clear();
      cache.set(token, { service, expiresAt: (payload.exp ?? 0) * 1000 });
      return service;
    } catch {
      return undefined;
    }
  };
}

export type ServiceVerifier = ReturnType<typeof createServiceVerifier>;
