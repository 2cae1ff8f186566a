import {
  createAuthCodeBody,
  createAuthCodeResponse,
  exchangeAuthCodeBody,
  exchangeAuthCodeResponse,
} from "./auth-code.js";
import { tokenExchangeBody, tokenExchangeResponse } from "./oauth-token.js";
import { defineRoute, type RouteContract } from "./route.js";

/** The PKCE flow and the workload-identity token exchange. Operation ids follow OpenRouter's. */
export const authRoutes = [
  defineRoute({
    operationId: "createAuthKeysCode",
    method: "post",
    path: "/auth/keys/code",
    summary: "Create an authorization code for the PKCE flow that yields a user-controlled API key",
    tag: "OAuth",
    auth: "management",
    body: createAuthCodeBody,
    responses: { 200: createAuthCodeResponse },
    errors: [400, 401, 403, 409, 500],
  }),
  defineRoute({
    operationId: "exchangeAuthCodeForAPIKey",
    method: "post",
    path: "/auth/keys",
    summary: "Exchange an authorization code (and its PKCE verifier) for an API key",
    tag: "OAuth",
    auth: "none",
    body: exchangeAuthCodeBody,
    responses: { 200: exchangeAuthCodeResponse },
    errors: [400, 403, 429, 500],
  }),
  defineRoute({
    operationId: "createOauthToken",
    method: "post",
    path: "/oauth/token",
    summary: "Exchange a workload-identity JWT for a short-lived access token (RFC 8693)",
    tag: "OAuth",
    auth: "none",
    body: tokenExchangeBody,
    bodyType: "form",
    responses: { 200: tokenExchangeResponse },
    errors: [400, 429, 500, 503],
  }),
] as const satisfies readonly RouteContract[];
