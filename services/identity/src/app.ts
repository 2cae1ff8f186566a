import {
  createHttpApp,
  finishHttpApp,
  mountHealth,
  postedPath,
  readJsonBody,
  readsAsPlainJson,
  requireCaller,
  requireService,
  sendJson,
  serviceOf,
  servePlain,
  verifiedService,
  type CallerVerifier,
  type HealthState,
  type Logger,
  type ReadinessCheck,
  type ServiceVerifier,
} from "@switchyard/runtime";
import type { RequestListener } from "node:http";
import type { KeyDeps } from "./keys/service.js";
import type { AccessTokens } from "./federation/access-tokens.js";
import type { createSubjectTokenVerifier } from "./federation/subject-token.js";
import {
  createPolicyRoute,
  deletePolicyRoute,
  getPolicyRoute,
  listPoliciesRoute,
  updatePolicyRoute,
} from "./routes/federation-policies.js";
import { formBody, oauthTokenErrors, oauthTokenOtherMethods, oauthTokenRoute } from "./routes/oauth-token.js";
import type { Sealer } from "./provider-keys/sealed.js";
import { deleteProviderKeyRoute, listProviderKeysRoute, openProviderKeyRoute, putProviderKeyRoute } from "./routes/provider-keys.js";
import { createAuthCodeRoute, exchangeAuthCodeRoute } from "./routes/auth-keys.js";
import { activityRoute, dailyActivityRoute, listGenerationsRoute } from "./routes/activity.js";
import { authenticateRoute } from "./routes/authenticate.js";
import { creditsRoute, updateCreditsRoute } from "./routes/credits.js";
import { currentKeyRoute } from "./routes/current-key.js";
import { describeKeysRoute, detachOwnerRoute, guardrailBudgetsRoute, holdAnswer, holdRoute, policyActiveRoute, releaseHoldRoute, releaseOwnerRoute, renewHoldsRoute, workspacePolicyRoute } from "./routes/internal.js";
import { createKeyRoute, deleteKeyRoute, getKeyRoute, listKeysRoute, updateKeyRoute } from "./routes/keys.js";
import {
  createWorkspaceRoute,
  deleteWorkspaceRoute,
  getWorkspaceRoute,
  listWorkspacesRoute,
  updateWorkspaceRoute,
} from "./routes/workspaces.js";

export interface IdentityAppDeps extends KeyDeps {
  sealer: Sealer | undefined;
  knownProvider(slug: string): Promise<boolean>;
  accessTokens: AccessTokens;
  subjectTokens: ReturnType<typeof createSubjectTokenVerifier>;
  federation: { allowInsecureIssuers: boolean; exchangesPerPolicyPerMinute: number };
  logger: Logger;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  defaultRateLimitPerMinute: number;
  maxBodyBytes: number;
  /** Off in standalone, where the router logs every request. */
  requestLogs: boolean;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}

/**
 * Identity's HTTP surface: keys, the calling key, workspaces, credits, activity and the generation list, and
 * internal lookups and spend holds. The spend hold, which every generation of a deployment of separate
 * processes asks for before its provider is called, is served without express when its body is plain JSON
 * (express's routing and body parsing were a large share of this service's CPU); express serves everything else.
 */
export function createApp(deps: IdentityAppDeps): RequestListener {
  const app = createHttpApp({ logger: deps.logger, maxBodyBytes: deps.maxBodyBytes, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);

  const service = requireService(deps.verifyService);
  app.post("/internal/keys/authenticate", service, authenticateRoute(deps.db));
  app.post("/internal/keys/describe", service, describeKeysRoute(deps.db));
  app.post("/internal/workspaces/policy", service, workspacePolicyRoute(deps.db));
  app.post("/internal/holds", service, holdRoute(deps.db));
  app.post("/internal/guardrail-budgets", service, guardrailBudgetsRoute(deps.db));
  app.post("/internal/federation-policies/active", service, policyActiveRoute(deps.db));
  app.post("/internal/holds/release", service, releaseHoldRoute(deps.db));
  app.post("/internal/holds/renew", service, renewHoldsRoute(deps.db));
  app.post("/internal/holds/release-owner", service, releaseOwnerRoute(deps.db));
  app.post("/internal/holds/detach", service, detachOwnerRoute(deps.db));
  app.post("/internal/provider-keys/open", service, openProviderKeyRoute(deps));

  // The token exchange proves itself with the subject token; the key set is public.
  app.post("/api/v1/oauth/token", formBody, oauthTokenRoute({ db: deps.db, verifier: deps.subjectTokens, tokens: deps.accessTokens, logger: deps.logger, perPolicyPerMinute: deps.federation.exchangesPerPolicyPerMinute }));
  app.all("/api/v1/oauth/token", oauthTokenOtherMethods);
  app.use("/api/v1/oauth/token", oauthTokenErrors(deps.logger));
  app.get("/api/v1/oauth/jwks", async (_req, res) => {
    res.set("Cache-Control", "public, max-age=60").json(await deps.accessTokens.jwks());
  });

  const caller = requireCaller(deps.verifyCaller);
  app.get("/api/v1/key", caller, currentKeyRoute(deps, { defaultRateLimitPerMinute: deps.defaultRateLimitPerMinute }));
  app.get("/api/v1/activity", caller, activityRoute(deps.db));
  app.get("/api/v1/activity/daily", caller, dailyActivityRoute(deps.db));
  app.get("/api/v1/generations", caller, listGenerationsRoute(deps.db));
  app.get("/api/v1/credits", caller, creditsRoute(deps.db));
  app.put("/api/v1/credits", caller, updateCreditsRoute(deps.db));
  app.get("/api/v1/keys", caller, listKeysRoute(deps));
  app.post("/api/v1/keys", caller, createKeyRoute(deps));
  app.get("/api/v1/keys/:hash", caller, getKeyRoute(deps));
  app.patch("/api/v1/keys/:hash", caller, updateKeyRoute(deps));
  app.delete("/api/v1/keys/:hash", caller, deleteKeyRoute(deps));
  app.get("/api/v1/workspaces", caller, listWorkspacesRoute(deps));
  app.post("/api/v1/workspaces", caller, createWorkspaceRoute(deps));
  app.get("/api/v1/workspaces/:id", caller, getWorkspaceRoute(deps));
  app.patch("/api/v1/workspaces/:id", caller, updateWorkspaceRoute(deps));
  app.delete("/api/v1/workspaces/:id", caller, deleteWorkspaceRoute(deps));
  app.get("/api/v1/workspaces/:id/provider-keys", caller, listProviderKeysRoute(deps));
  app.put("/api/v1/workspaces/:id/provider-keys/:provider", caller, putProviderKeyRoute(deps));
  app.delete("/api/v1/workspaces/:id/provider-keys/:provider", caller, deleteProviderKeyRoute(deps));
  app.post("/api/v1/auth/keys/code", caller, createAuthCodeRoute(deps));
  app.post("/api/v1/auth/keys", exchangeAuthCodeRoute(deps));
  const federation = { db: deps.db, allowInsecureIssuers: deps.federation.allowInsecureIssuers };
  app.get("/api/v1/federation-policies", caller, listPoliciesRoute(federation));
  app.post("/api/v1/federation-policies", caller, createPolicyRoute(federation));
  app.get("/api/v1/federation-policies/:id", caller, getPolicyRoute(federation));
  app.patch("/api/v1/federation-policies/:id", caller, updatePolicyRoute(federation));
  app.delete("/api/v1/federation-policies/:id", caller, deletePolicyRoute(federation));

  finishHttpApp(app, deps.logger);

  const { logger } = deps;
  const holds = "/internal/holds";
  return (req, res) => {
    if (postedPath(req) !== holds || !readsAsPlainJson(req)) return void app(req, res);
    servePlain(req, res, { logger, service: serviceOf(logger), route: holds, observe: deps.requestLogs }, async () => {
      await verifiedService(req, deps.verifyService);
      sendJson(res, 200, await holdAnswer(deps.db, await readJsonBody(req, deps.maxBodyBytes)));
    });
  };
}
