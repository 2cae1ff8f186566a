import type { RequestListener } from "node:http";
import {
  assignRequestId,
  callerHeader,
  callerOf,
  countWhenDone,
  createHttpApp,
  finishHttpApp,
  HttpError,
  logWhenDone,
  mountHealth,
  pathOf,
  readJsonBody,
  readsAsPlainJson,
  requireCaller,
  sendError,
  serviceOf,
  withRequestId,
} from "@switchyard/runtime";
import type { InferenceDeps } from "./deps.js";
import { chatCompletionsRoute } from "./routes/chat-completions.js";
import { generationRoute } from "./routes/generation.js";

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
  finishHttpApp(app, logger);
  const service = serviceOf(logger);

  return (req, res) => {
    if (req.method !== "POST" || !isChatPath(req.url) || !readsAsPlainJson(req)) return void app(req, res);
    const id = assignRequestId(req, res);
    if (deps.requestLogs) {
      logWhenDone(logger, req, res);
      countWhenDone(service, req, res, () => chatPath);
    }
    withRequestId(id, () => {
      (async () => {
        const token = req.headers[callerHeader];
        const who = typeof token === "string" ? await deps.verifyCaller(token) : undefined;
        if (!who) throw new HttpError("unauthorized", "Missing or invalid internal caller credentials");
        await chat({ headers: req.headers, body: await readJsonBody(req, deps.maxBodyBytes) }, res, who);
      })().catch((error: unknown) => sendError(res, error, logger, id));
    });
  };
}
