import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JWK, type JWTPayload } from "jose";
import { z } from "zod";
import { retryAfterSeconds } from "@switchyard/runtime";
import { FetchRefused, fetchJson, type SafeFetchOptions } from "@switchyard/upstream";

/** What a token exchange policy says about acceptable subject tokens. */
export interface SubjectTokenPolicy {
  issuer: string;
  audiences: readonly string[];
  maxTokenLifetimeSeconds: number | null;
}

/** The token is not accepted. The message is for logs only; callers must not see why. */
export class SubjectTokenRejected extends Error {}

/**
 * The issuer's discovery document or key set could not be obtained or used (down, malformed, oversize,
 * or at an address we refuse to connect to) and no usable keys are cached.
 */
export class IssuerUnavailable extends Error {
  constructor(
    message: string,
    /** When the issuer will next be tried, as a `Retry-After` value: a client retrying sooner gets this same answer. */
    readonly retryAfter = "1",
  ) {
    super(message);
  }
}

export interface SubjectTokenVerifierOptions {
  /** Dev/tests only: allow http:// and loopback/private addresses. */
  allowInsecureIssuers: boolean;
  clockToleranceSeconds?: number;
  fetchTimeoutMs?: number;
  maxResponseBytes?: number;
  /** A token with an unknown kid refetches the key set at most this often per issuer. */
  minRefreshIntervalMs?: number;
  /** During an issuer outage, cached keys stay usable this long past their freshness. */
  staleKeysForMs?: number;
  /** How long a fetched discovery document and key set are fresh. */
  cacheTtlMs?: number;
  now?: () => number;
}

type VerifyKey = Awaited<ReturnType<typeof importJWK>>;

const rsa = (jwk: JWK) => jwk.kty === "RSA";
const ec = (crv: string) => (jwk: JWK) => jwk.kty === "EC" && jwk.crv === crv;
const okp = (jwk: JWK) => jwk.kty === "OKP" && (jwk.crv === "Ed25519" || jwk.crv === "Ed448");

/** Asymmetric algorithms only, each with the key shape it needs; anything else (none, HS*) is never allowed. */
const keyFits = new Map<string, (jwk: JWK) => boolean>([
  ["RS256", rsa], ["RS384", rsa], ["RS512", rsa],
  ["PS256", rsa], ["PS384", rsa], ["PS512", rsa],
  ["ES256", ec("P-256")], ["ES384", ec("P-384")], ["ES512", ec("P-521")],
  ["EdDSA", okp],
]);

const discoverySchema = z.object({ issuer: z.string(), jwks_uri: z.string() });
const keySetSchema = z.object({ keys: z.array(z.unknown()) });
const publicKeySchema = z.looseObject({
  kty: z.enum(["RSA", "EC", "OKP"]),
  kid: z.string().optional(),
  alg: z.string().optional(),
  use: z.string().optional(),
  key_ops: z.array(z.string()).optional(),
  crv: z.string().optional(),
  d: z.never().optional(), // private key material has no business in a published key set
});

interface KeySet {
  keys: JWK[];
  imported: Map<string, Promise<VerifyKey>>;
}

interface IssuerState {
  keys?: KeySet;
  fetchedAt: number;
  attemptedAt: number;
  failed: boolean;
  refreshing?: Promise<KeySet>;
}

function fits(jwk: JWK, alg: string): boolean {
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if (jwk.use !== undefined && jwk.use !== "sig") return false;
  if (jwk.key_ops !== undefined && !jwk.key_ops.includes("verify")) return false;
  return keyFits.get(alg)!(jwk);
}

/** The key a token names, undefined when the set has no such key (which may warrant a refetch). */
function selectKey(set: KeySet, alg: string, kid: string | undefined): JWK | undefined {
  if (kid !== undefined) {
    const named = set.keys.filter((k) => k.kid === kid);
    if (named.length === 0) return undefined;
    const usable = named.find((k) => fits(k, alg));
    if (!usable) throw new SubjectTokenRejected(`key ${kid} cannot verify ${alg}`);
    return usable;
  }
  const usable = set.keys.filter((k) => fits(k, alg));
  if (usable.length > 1) throw new SubjectTokenRejected(`token has no kid and ${usable.length} keys could verify ${alg}`);
  return usable[0];
}

function readHeader(token: string): { alg: string; kid: string | undefined } {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch (error) {
    throw new SubjectTokenRejected(`malformed token: ${(error as Error).message}`);
  }
  const { alg, kid } = header;
  if (typeof alg !== "string" || !keyFits.has(alg)) throw new SubjectTokenRejected(`algorithm ${String(alg)} is not allowed`);
  if (kid !== undefined && typeof kid !== "string") throw new SubjectTokenRejected("kid is not a string");
  return { alg, kid };
}

function unverifiedIssuer(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch (error) {
    throw new SubjectTokenRejected(`malformed token: ${(error as Error).message}`);
  }
}

/**
 * Verifies JWTs from external workload-identity issuers against a policy. Keys come only from the policy
 * issuer's own discovery document, never from anything in the token (jku, x5u and jwk headers are ignored).
 */
export function createSubjectTokenVerifier(options: SubjectTokenVerifierOptions) {
  const now = options.now ?? Date.now;
  const tolerance = options.clockToleranceSeconds ?? 30;
  const minRefreshIntervalMs = options.minRefreshIntervalMs ?? 60_000;
  const staleKeysForMs = options.staleKeysForMs ?? 60 * 60_000;
  const cacheTtlMs = options.cacheTtlMs ?? 10 * 60_000;
  const fetchOptions: SafeFetchOptions = {
    allowInsecure: options.allowInsecureIssuers,
    timeoutMs: options.fetchTimeoutMs ?? 5000,
    maxBytes: options.maxResponseBytes ?? 256 * 1024,
  };
  // Issuers come from policies (checked before any fetch), so this grows with configuration, not traffic.
  const issuers = new Map<string, IssuerState>();

  async function fetchDocument(issuer: string, what: string, url: string): Promise<unknown> {
    try {
      return await fetchJson(url, fetchOptions);
    } catch (error) {
      const refused = error instanceof FetchRefused ? "refused by address policy: " : "";
      throw new IssuerUnavailable(`${issuer} ${what}: ${refused}${(error as Error).message}`);
    }
  }

  async function loadKeySet(issuer: string): Promise<KeySet> {
    const base = issuer.endsWith("/") ? issuer.slice(0, -1) : issuer;
    const discovery = discoverySchema.safeParse(await fetchDocument(issuer, "discovery", `${base}/.well-known/openid-configuration`));
    if (!discovery.success) throw new IssuerUnavailable(`${issuer} discovery: document lacks issuer or jwks_uri`);
    if (discovery.data.issuer !== issuer) {
      throw new IssuerUnavailable(`${issuer} discovery: document names issuer ${JSON.stringify(discovery.data.issuer)}`);
    }
    const set = keySetSchema.safeParse(await fetchDocument(issuer, "key set", discovery.data.jwks_uri));
    if (!set.success) throw new IssuerUnavailable(`${issuer} key set: document has no keys array`);
    // One odd entry (a symmetric or private key, an unknown kty) must not take the issuer's other keys down with it.
    const keys = set.data.keys.flatMap((key) => {
      const parsed = publicKeySchema.safeParse(key);
      return parsed.success ? [parsed.data as JWK] : [];
    });
    return { keys, imported: new Map() };
  }

  function stateOf(issuer: string): IssuerState {
    let state = issuers.get(issuer);
    if (!state) issuers.set(issuer, (state = { fetchedAt: 0, attemptedAt: -Infinity, failed: false }));
    return state;
  }

  function refresh(issuer: string, state: IssuerState): Promise<KeySet> {
    if (state.refreshing) return state.refreshing;
    state.attemptedAt = now();
    const refreshing = loadKeySet(issuer)
      .then(
        (keys) => {
          Object.assign(state, { keys, fetchedAt: now(), failed: false });
          return keys;
        },
        (error: unknown) => {
          state.failed = true;
          throw error;
        },
      )
      .finally(() => {
        state.refreshing = undefined;
      });
    state.refreshing = refreshing;
    return refreshing;
  }

  function staleButUsable(state: IssuerState): KeySet | undefined {
    return state.keys && now() < state.fetchedAt + cacheTtlMs + staleKeysForMs ? state.keys : undefined;
  }

  async function currentKeys(issuer: string, state: IssuerState): Promise<KeySet> {
    if (state.keys && now() < state.fetchedAt + cacheTtlMs) return state.keys;
    // After a failed fetch, wait before trying again so a down issuer is not hammered by every request.
    if (state.failed && !state.refreshing && now() - state.attemptedAt < minRefreshIntervalMs) {
      const stale = staleButUsable(state);
      if (stale) return stale;
      throw new IssuerUnavailable(`${issuer}: last fetch failed, retrying after ${minRefreshIntervalMs} ms`);
    }
    try {
      return await refresh(issuer, state);
    } catch (error) {
      const stale = staleButUsable(state);
      if (stale) return stale;
      throw error;
    }
  }

  /** A failed fetch is not repeated for `minRefreshIntervalMs`: until then every exchange fails the same way. */
  const untilNextAttempt = (state: IssuerState): string => retryAfterSeconds(state.attemptedAt + minRefreshIntervalMs - now());

  async function keyFor(issuer: string, alg: string, kid: string | undefined): Promise<VerifyKey> {
    const state = stateOf(issuer);
    let set = await currentKeys(issuer, state);
    let jwk = selectKey(set, alg, kid);
    if (!jwk) {
      // An unknown kid may be a freshly rotated key, or noise; refetch, but not more than once per interval.
      if (!state.refreshing && now() - state.attemptedAt < minRefreshIntervalMs) {
        throw new SubjectTokenRejected(`${issuer} has no key ${kid ?? "(no kid)"} for ${alg}; key set refetched recently`);
      }
      set = await refresh(issuer, state);
      jwk = selectKey(set, alg, kid);
      if (!jwk) throw new SubjectTokenRejected(`${issuer} has no key ${kid ?? "(no kid)"} for ${alg}`);
    }
    const cacheKey = `${set.keys.indexOf(jwk)}:${alg}`;
    let imported = set.imported.get(cacheKey);
    if (!imported) set.imported.set(cacheKey, (imported = importJWK(jwk, alg)));
    try {
      return await imported;
    } catch (error) {
      throw new SubjectTokenRejected(`${issuer} key ${kid ?? "(no kid)"} is unusable: ${(error as Error).message}`);
    }
  }

  async function verify(token: string, policy: SubjectTokenPolicy): Promise<JWTPayload> {
    const { alg, kid } = readHeader(token);
    const iss = unverifiedIssuer(token);
    if (iss !== policy.issuer) throw new SubjectTokenRejected(`token issuer ${JSON.stringify(iss)} is not ${policy.issuer}`);
    if (policy.audiences.length === 0) throw new SubjectTokenRejected(`policy for ${policy.issuer} lists no audiences`);
    const key = await keyFor(policy.issuer, alg, kid).catch((error: unknown) => {
      if (!(error instanceof IssuerUnavailable)) throw error;
      throw new IssuerUnavailable(error.message, untilNextAttempt(stateOf(policy.issuer)));
    });
    const lifetimeLimited = policy.maxTokenLifetimeSeconds !== null;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [alg],
        issuer: policy.issuer,
        audience: [...policy.audiences],
        requiredClaims: lifetimeLimited ? ["exp", "iat"] : ["exp"],
        clockTolerance: tolerance,
        currentDate: new Date(now()),
      }));
    } catch (error) {
      throw new SubjectTokenRejected(`${policy.issuer}: ${(error as Error).message}`);
    }
    if (payload.iat !== undefined && payload.iat > now() / 1000 + tolerance) {
      throw new SubjectTokenRejected(`${policy.issuer}: iat is in the future`);
    }
    if (lifetimeLimited && payload.exp! - payload.iat! > policy.maxTokenLifetimeSeconds!) {
      throw new SubjectTokenRejected(`${policy.issuer}: token lifetime ${payload.exp! - payload.iat!} s exceeds ${policy.maxTokenLifetimeSeconds} s`);
    }
    return payload;
  }

  return { verify };
}
