import type { RequestListener } from "node:http";
import {
  callerOf,
  createHttpApp,
  finishHttpApp,
  mountHealth,
  pathOf,
  readJsonBody,
  readsAsPlainJson,
  requireCaller,
  serviceOf,
  servePlain,
  verifiedCaller,
} from "@switchyard/runtime";
import type { InferenceDeps } from "./deps.js";
import { chatCompletionsRoute } from "./routes/chat-completions.js";
import { generationContentRoute, generationRoute } from "./routes/generation.js";

const chatPath = "/api/v1/chat/completions";
/** As express matches routes: case-insensitive, with or without a trailing slash. */
const isChatPath = (url: string | undefined) => {
  const path = pathOf(url).toLowerCase();
  return path === chatPath || path === `${chatPath}/`;
};

/**
 * Inference's HTTP surface: chat completions and the generation records they leave. Completions, the
 * requests that matter for speed, skip express (its routing and body parsing cost about as much CPU as
 * everything else this service does for a request); express keeps the rest, and completions whose body
 * is compressed or in another charset.
 */
export function createApp(deps: InferenceDeps): RequestListener {
  const { logger } = deps;
  const app = createHttpApp({ logger, maxBodyBytes: deps.maxBodyBytes, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  const caller = requireCaller(deps.verifyCaller);
  const chat = chatCompletionsRoute(deps);
  app.post(chatPath, caller, (req, res) => chat(req, res, callerOf(res)));
  app.get("/api/v1/generation", caller, generationRoute(deps));
  app.get("/api/v1/generation/content", caller, generationContentRoute(deps));
  finishHttpApp(app, logger);
  const plain = { logger, service: serviceOf(logger), route: chatPath, observe: deps.requestLogs };

  return (req, res) => {
    if (req.method !== "POST" || !isChatPath(req.url) || !readsAsPlainJson(req)) return void app(req, res);
    servePlain(req, res, plain, async () => {
      const caller = await verifiedCaller(req, deps.verifyCaller);
      await chat({ headers: req.headers, body: await readJsonBody(req, deps.maxBodyBytes) }, res, caller);
    });
  };
}
