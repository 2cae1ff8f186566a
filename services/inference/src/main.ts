import { holdResponse, releaseHoldResponse, resolveModelResponse } from "@switchyard/contracts";
import {
  createCallerVerifier,
  createInternalClient,
  createLogger,
  createServiceSigner,
  notFound,
  openBackends,
  serveProcess,
} from "@switchyard/runtime";
import { loadInferenceConfig } from "./config.js";
import { startInference } from "./start.js";

/** The inference service as its own process. */
const config = loadInferenceConfig();
const logger = createLogger({ service: "inference", level: config.LOG_LEVEL });
const secret = config.SWITCHYARD_INTERNAL_SECRET;
if (!secret) {
  logger.fatal("SWITCHYARD_INTERNAL_SECRET is required when inference runs as its own process");
  process.exit(1);
}
const { db, bus } = await openBackends(config, logger, "inference");
const signer = createServiceSigner(secret, "inference");
const catalog = createInternalClient(config.CATALOG_URL, signer);
const identity = createInternalClient(config.IDENTITY_URL, signer);
const health = { draining: false };
const inference = await startInference({
  db,
  bus,
  logger,
  async resolve(request) {
    const body = { model: request.model, key_hash: request.keyHash, workspace_id: request.workspaceId, organization_id: request.organizationId, host: request.host };
    const answer = await catalog.post("/internal/models/resolve", body, resolveModelResponse);
    if (!answer) throw notFound(`Model ${request.model} not found`);
    return answer.data;
  },
  holds: {
    async hold(request) {
      const answer = await identity.post("/internal/holds", request, holdResponse);
      if (!answer) throw new Error("identity has no /internal/holds route");
      return answer.data;
    },
    async release(generationId) {
      return (await identity.post("/internal/holds/release", { generation_id: generationId }, releaseHoldResponse))?.released ?? false;
    },
  },
  config,
  verifyCaller: createCallerVerifier(secret),
  health,
});
await serveProcess("inference", config, {
  handler: inference.app,
  logger,
  health,
  onClosed: async () => {
    await inference.stop();
    await bus.close();
    await db.close();
  },
});
