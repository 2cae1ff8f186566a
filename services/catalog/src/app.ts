import {
  ConfigError,
  createHttpApp,
  finishHttpApp,
  HttpError,
  managementCallerOf,
  mountHealth,
  requireCaller,
  requireService,
} from "@switchyard/runtime";
import type { CatalogReloadResponse } from "@switchyard/contracts";
import type { Express, RequestHandler } from "express";
import type { CatalogDeps } from "./deps.js";
import {
  assignKeysRoute,
  createGuardrailRoute,
  deleteGuardrailRoute,
  getGuardrailRoute,
  listAllKeyAssignmentsRoute,
  listGuardrailKeysRoute,
  listGuardrailsRoute,
  unassignKeysRoute,
  updateGuardrailRoute,
} from "./routes/guardrails.js";
import { imageModelEndpointsRoute, listImageModelsRoute } from "./routes/image-models.js";
import { knownProviderRoute, resolveModelRoute } from "./routes/internal.js";
import {
  countModelsRoute,
  getModelRoute,
  listEmbeddingsModelsRoute,
  listModelsRoute,
  listProvidersRoute,
  listUserModelsRoute,
  listZdrEndpointsRoute,
  modelEndpointsRoute,
} from "./routes/models.js";
import {
  createPresetRoute,
  deletePresetRoute,
  designatePresetRoute,
  getPresetRoute,
  getPresetVersionRoute,
  listPresetsRoute,
  listPresetVersionsRoute,
  savePresetRoute,
} from "./routes/presets.js";

/** Catalog's HTTP surface: models, providers, presets, guardrails, and model resolution for inference. */
export function createApp(deps: CatalogDeps, reload: () => Promise<{ models: number; providers: number }>): Express {
  const app = createHttpApp({ logger: deps.logger, maxBodyBytes: deps.maxBodyBytes, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  app.post("/internal/models/resolve", requireService(deps.verifyService), resolveModelRoute(deps));
  app.post("/internal/providers/known", requireService(deps.verifyService), knownProviderRoute(deps));

  const caller = requireCaller(deps.verifyCaller);
  const v1 = (path: string) => `/api/v1${path}`;
  app.get(v1("/models"), caller, listModelsRoute(deps));
  app.get(v1("/models/count"), caller, countModelsRoute(deps));
  app.get(v1("/model/:author/:slug"), caller, getModelRoute(deps));
  app.get(v1("/embeddings/models"), caller, listEmbeddingsModelsRoute(deps));
  app.get(v1("/models/user"), caller, listUserModelsRoute(deps));
  app.get(v1("/models/:author/:slug/endpoints"), caller, modelEndpointsRoute(deps));
  app.get(v1("/endpoints/zdr"), caller, listZdrEndpointsRoute(deps));
  app.get(v1("/images/models"), caller, listImageModelsRoute(deps));
  app.get(v1("/images/models/:author/:slug/endpoints"), caller, imageModelEndpointsRoute(deps));
  app.get(v1("/providers"), caller, listProvidersRoute(deps));

  app.get(v1("/presets"), caller, listPresetsRoute(deps));
  app.post(v1("/presets"), caller, createPresetRoute(deps));
  app.get(v1("/presets/:slug"), caller, getPresetRoute(deps));
  app.delete(v1("/presets/:slug"), caller, deletePresetRoute(deps));
  app.post(v1("/presets/:slug/chat/completions"), caller, savePresetRoute(deps));
  app.post(v1("/presets/:slug/designated-version"), caller, designatePresetRoute(deps));
  app.get(v1("/presets/:slug/versions"), caller, listPresetVersionsRoute(deps));
  app.get(v1("/presets/:slug/versions/:version"), caller, getPresetVersionRoute(deps));

  app.get(v1("/guardrails"), caller, listGuardrailsRoute(deps));
  app.post(v1("/guardrails"), caller, createGuardrailRoute(deps));
  app.get(v1("/guardrails/assignments/keys"), caller, listAllKeyAssignmentsRoute(deps));
  app.get(v1("/guardrails/:id"), caller, getGuardrailRoute(deps));
  app.patch(v1("/guardrails/:id"), caller, updateGuardrailRoute(deps));
  app.delete(v1("/guardrails/:id"), caller, deleteGuardrailRoute(deps));
  app.get(v1("/guardrails/:id/assignments/keys"), caller, listGuardrailKeysRoute(deps));
  app.post(v1("/guardrails/:id/assignments/keys"), caller, assignKeysRoute(deps));
  app.post(v1("/guardrails/:id/assignments/keys/remove"), caller, unassignKeysRoute(deps));

  const reloadRoute: RequestHandler = async (_req, res) => {
    managementCallerOf(res);
    try {
      res.json({ data: await reload() } satisfies CatalogReloadResponse);
    } catch (error) {
      // The operator's file is wrong: the caller's to fix, so a 400 that says how; the catalog already loaded stays.
      if (error instanceof ConfigError) throw new HttpError("bad_request", `${error.message}\nThe previous catalog stays in place.`);
      throw error;
    }
  };
  app.post(v1("/catalog/reload"), caller, reloadRoute);
  return finishHttpApp(app, deps.logger);
}
