import type { FileProvider, GenerationContentStore } from "@switchyard/contracts";
import { busReadiness, migrate, openObjectStore, outboxSink, startOutboxRelay, type Bus, type CallerVerifier, type Db, type HealthState, type Logger, type ServiceVerifier } from "@switchyard/runtime";
import type { Express } from "express";
import { createApp } from "./app.js";
import type { StorageConfig } from "./config.js";
import { syncContainerFiles, type SyncBody } from "./containers/sync.js";
import { startSweeper } from "./files/sweeper.js";
import { startWorkspaceFilesConsumer } from "./files/workspace-deletion.js";
import { readContent, saveContent, startContentRetention } from "./generation-content/records.js";
import { migrations, schema } from "./migrations.js";
import { anthropicFiles } from "./providers/anthropic-files.js";
import { openAiFiles } from "./providers/openai-files.js";

export interface StorageStartDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  /**
   * The workspace's own key for a provider (identity's BYOK keys): in-process in standalone, over HTTP
   * otherwise. `organizationId` is the caller's, which identity checks the workspace against.
   */
  providerKey(workspaceId: string, provider: FileProvider, organizationId: string): Promise<string | undefined>;
  /** The organization a workspace belongs to (identity's), undefined for an unknown one: `workspace_id` is trusted to no one unchecked. */
  workspaceOrganization(workspaceId: string): Promise<string | undefined>;
  config: Pick<
    StorageConfig,
    "providerEnv" | "MAX_FILE_BYTES" | "ORPHAN_UPLOAD_MS" | "GENERATION_CONTENT_RETENTION_MS" | "S3_ENDPOINT" | "S3_BUCKET" | "S3_REGION" | "S3_ACCESS_KEY_ID" | "S3_SECRET_ACCESS_KEY" | "S3_FORCE_PATH_STYLE" | "SWITCHYARD_DATA_DIR"
  >;
  verifyCaller: CallerVerifier;
  verifyService: ServiceVerifier;
  health: HealthState;
  requestLogs?: boolean;
}

export interface RunningStorage {
  app: Express;
  /** Sandboxes in this process report their files here (others use `POST /internal/containers/{id}/files`). */
  syncContainerFiles(containerId: string, body: SyncBody): Promise<number>;
  /** Inference in this process keeps and reads logged generation content here (others use the internal routes). */
  generationContent: GenerationContentStore;
  stop(): Promise<void>;
}

/** Providers' Files APIs, where `<SLUG>_BASE_URL` may point them elsewhere as it does for chat. */
const defaultBaseUrls: Record<FileProvider, string> = { openai: "https://api.openai.com/v1", anthropic: "https://api.anthropic.com/v1" };

export async function startStorage(deps: StorageStartDeps): Promise<RunningStorage> {
  const applied = await migrate(deps.db, schema, migrations);
  if (applied.length) deps.logger.info({ applied }, "storage migrations applied");
  const objects = await openObjectStore(deps.config);
  // A deleted workspace's files (and container files) go with it, objects and rows.
  const workspaceFiles = await startWorkspaceFilesConsumer({ db: deps.db, objects, bus: deps.bus, logger: deps.logger });
  const relay = startOutboxRelay({ db: deps.db, schema, bus: deps.bus, logger: deps.logger });
  const sweeper = startSweeper({ db: deps.db, objects, logger: deps.logger, olderThanMs: deps.config.ORPHAN_UPLOAD_MS });
  const retentionMs = deps.config.GENERATION_CONTENT_RETENTION_MS;
  const retention = startContentRetention({ db: deps.db, objects, logger: deps.logger, everyMs: Math.min(60_000, Math.max(1000, retentionMs / 2)) });
  const env = deps.config.providerEnv;
  const events = outboxSink(schema, relay);
  const app = createApp({
    db: deps.db,
    objects,
    events,
    logger: deps.logger,
    providers: { openai: openAiFiles, anthropic: anthropicFiles },
    async accountFor(owner, provider) {
      const apiKey = await deps.providerKey(owner.workspaceId, provider, owner.organizationId);
      return apiKey ? { apiKey, baseUrl: env[`${provider.toUpperCase()}_BASE_URL`] ?? defaultBaseUrls[provider] } : undefined;
    },
    async workspaceInOrganization(workspaceId, organizationId) {
      return (await deps.workspaceOrganization(workspaceId)) === organizationId;
    },
    verifyCaller: deps.verifyCaller,
    verifyService: deps.verifyService,
    maxFileBytes: deps.config.MAX_FILE_BYTES,
    contentRetentionMs: deps.config.GENERATION_CONTENT_RETENTION_MS,
    requestLogs: deps.requestLogs ?? true,
    health: deps.health,
    readiness: { database: () => deps.db.ping(), objects: () => objects.ping(), ...busReadiness(deps.bus) },
  });
  return {
    app,
    syncContainerFiles: (containerId, body) => syncContainerFiles({ db: deps.db, objects, events }, containerId, body),
    generationContent: {
      save: (entry) => saveContent({ db: deps.db, objects }, entry, retentionMs),
      read: (generationId, organizationId) => readContent({ db: deps.db, objects }, generationId, organizationId),
    },
    async stop() {
      sweeper.stop();
      retention.stop();
      await workspaceFiles.stop();
      await relay.stop();
    },
  };
}
