import { tokenExchangeBody, tokenExchangeGrantType, type OAuthError } from "@switchyard/contracts";
import { oauthNoStore, requestIdHeader, sendOAuthError, type Logger } from "@switchyard/runtime";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { exchangeToken, OAuthFailure, type ExchangeDeps, type IssuanceQuota } from "../federation/exchange.js";

export interface OAuthTokenDeps extends Omit<ExchangeDeps, "quota"> {
  logger: Logger;
  /** Exchanges a federation policy accepts per minute, in this process. */
  perPolicyPerMinute: number;
}

/**
 * The form body, for this route only; the rest of identity speaks JSON. RFC 6749 §3.2 says to ignore
 * parameters the server does not know, so their number is bounded only by the body's size, not refused.
 */
export const formBody = express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 10_000 });

/** Whatever fails before or around the route (a body too large or malformed) still answers in OAuth's shape. */
export const oauthTokenErrors =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, _next) =>
    sendOAuthError(res, error, logger, req.headers[requestIdHeader]);

/** The endpoint takes POST only (RFC 6749 §3.2); other methods get 405 in the same shape. */
export const oauthTokenOtherMethods: RequestHandler = (_req, res) => {
  res.set({ ...oauthNoStore, Allow: "POST" }).status(405).json({ error: "invalid_request", error_description: "The token endpoint accepts POST only" } satisfies OAuthError);
};

/** RFC 6749 §5.2: which error code a malformed field earns. */
function malformed(body: Record<string, unknown>, issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): OAuthError {
  const fields = issues.map((i) => String(i.path[0] ?? "body"));
  if (typeof body.grant_type === "string" && body.grant_type !== tokenExchangeGrantType && fields.includes("grant_type")) {
    return { error: "unsupported_grant_type", error_description: `grant_type must be ${tokenExchangeGrantType}` };
  }
  if (fields.length === 1 && fields[0] === "scope") return { error: "invalid_scope", error_description: "scope: only inference is available" };
  return { error: "invalid_request", error_description: issues.map((i) => `${String(i.path[0] ?? "body")}: ${i.message}`).join("; ") };
}

/**
 * A fixed one-minute window per policy. The exchange takes a slot only once the policy has accepted the
 * subject token, so this bounds issuance; refusals are bounded elsewhere (the issuer's keys are fetched at
 * most once per refresh interval, and the router limits the endpoint per client address).
 */
function perMinuteQuota(limit: number): IssuanceQuota {
  let window = 0;
  const counts = new Map<string, number>();
  const currentWindow = () => {
    const current = Math.floor(Date.now() / 60_000);
    if (current !== window) {
      window = current;
      counts.clear();
    }
    return current;
  };
  return {
    take(policyId) {
      const taken = currentWindow();
      const n = counts.get(policyId) ?? 0;
      if (n >= limit) return undefined;
      counts.set(policyId, n + 1);
      // A slot given back after its window ended is already forgotten.
      return () => {
        if (currentWindow() === taken) counts.set(policyId, Math.max(0, (counts.get(policyId) ?? 1) - 1));
      };
    },
    retryAfter: () => String(60 - (Math.floor(Date.now() / 1000) % 60)),
  };
}

/** `POST /oauth/token`: RFC 8693 token exchange, answering in RFC 6749's error format and never cached. */
export const oauthTokenRoute = (deps: OAuthTokenDeps): RequestHandler => {
  const exchangeDeps: ExchangeDeps = { ...deps, quota: perMinuteQuota(deps.perPolicyPerMinute) };
  return async (req, res) => {
    res.set(oauthNoStore);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => res.set(headers).status(status).json(body);
    if (!req.is("application/x-www-form-urlencoded")) {
      return send(400, { error: "invalid_request", error_description: "The body must be application/x-www-form-urlencoded" });
    }
    const raw = (req.body ?? {}) as Record<string, unknown>;
    const parsed = tokenExchangeBody.safeParse(raw);
    if (!parsed.success) return send(400, malformed(raw, parsed.error.issues));
    try {
      send(200, await exchangeToken(exchangeDeps, parsed.data));
    } catch (error) {
      if (error instanceof OAuthFailure) {
        deps.logger.info({ policy: parsed.data.federation_policy_id, reason: error.reason, status: error.status }, "token exchange refused");
        return send(error.status, error.body, error.headers);
      }
      deps.logger.error({ err: error }, "token exchange failed");
      send(500, { error: "server_error", error_description: "The token could not be issued" });
    }
  };
};
