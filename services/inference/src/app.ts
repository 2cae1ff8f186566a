import type { RequestListener } from "node:http";
import {
  callerOf,
  createHttpApp,
  finishHttpApp,
  mountHealth,
  postedPath,
  readJsonBody,
  readsAsPlainJson,
  requestIdHeader,
  requireCaller,
  requireService,
  sendAnthropicError,
  sendError,
  serviceOf,
  servePlain,
  verifiedCaller,
  type Caller,
} from "@switchyard/runtime";
import type { ServerResponse } from "node:http";
import { endpointStatsEntries } from "@switchyard/upstream";
import type { InferenceDeps } from "./deps.js";
import { chatCompletionsRoute, type JsonRequest } from "./dialects/chat/route.js";
import { completionsRoute } from "./dialects/completions/route.js";
import { countTokensRoute } from "./dialects/messages/count-tokens.js";
import { messagesRoute } from "./dialects/messages/route.js";
import { responsesRoute } from "./dialects/responses/route.js";
import { generationContentRoute, generationRoute } from "./generations/routes.js";
import { embeddingsRoute } from "./retrieval/embeddings.js";
import { rerankRoute } from "./retrieval/rerank.js";

type Dialect = (req: JsonRequest, res: ServerResponse, caller: Caller) => Promise<void>;

/** The Messages routes answer errors in Anthropic's shape, which its SDK and Claude Code read. */
const anthropicPaths = new Set(["/api/v1/messages", "/api/v1/messages/count_tokens"]);

/**
 * Inference's HTTP surface: each dialect's generation route, embeddings and rerank, and the generation records they leave.
 * Generation requests, the ones that matter for speed, skip express (its routing and body parsing cost
 * about as much CPU as everything else this service does for a request); express keeps the rest, and
 * generation requests whose body is compressed or in another charset.
 */
export function createApp(deps: InferenceDeps): RequestListener {
  const { logger } = deps;
  const app = createHttpApp({ logger, maxBodyBytes: deps.maxBodyBytes, requestLogs: deps.requestLogs });
  mountHealth(app, deps.readiness, deps.health);
  const caller = requireCaller(deps.verifyCaller);
  const dialects = new Map<string, Dialect>([
    ["/api/v1/chat/completions", chatCompletionsRoute(deps)],
    ["/api/v1/responses", responsesRoute(deps)],
    ["/api/v1/completions", completionsRoute(deps)],
    ["/api/v1/messages", messagesRoute(deps)],
    ["/api/v1/messages/count_tokens", countTokensRoute(deps)],
    ["/api/v1/embeddings", embeddingsRoute(deps)],
    ["/api/v1/rerank", rerankRoute(deps)],
  ]);
  const errorsOf = (path: string) => (anthropicPaths.has(path) ? sendAnthropicError : sendError);
  for (const [path, route] of dialects) {
    const send = errorsOf(path);
    app.post(path, caller, (req, res) => route(req, res, callerOf(res)).catch((error: unknown) => send(res, error, logger, req.headers[requestIdHeader])));
  }
  app.get("/api/v1/generation", caller, generationRoute(deps));
  app.post("/internal/endpoint-stats", requireService(deps.verifyService), (_req, res) => void res.json({ data: endpointStatsEntries(deps.stats) }));
  app.get("/api/v1/generation/content", caller, generationContentRoute(deps));
  finishHttpApp(app, logger);

  return (req, res) => {
    const path = postedPath(req);
    const route = dialects.get(path);
    if (!route || !readsAsPlainJson(req)) return void app(req, res);
    servePlain(req, res, { logger, service: serviceOf(logger), route: path, observe: deps.requestLogs, sendError: errorsOf(path) }, async () => {
      const verified = await verifiedCaller(req, deps.verifyCaller);
      await route({ headers: req.headers, body: await readJsonBody(req, deps.maxBodyBytes) }, res, verified);
    });
  };
}
