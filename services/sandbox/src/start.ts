import type { SandboxExecRequest, SandboxExecResponse } from "@switchyard/contracts";
import { migrate, type Db, type HealthState, type Logger, type ServiceVerifier } from "@switchyard/runtime";
import type { Express } from "express";
import { createApp } from "./app.js";
import type { SandboxConfig } from "./config.js";
import type { ReportFiles, SandboxDeps, SandboxLimits } from "./deps.js";
import { execute } from "./exec.js";
import { keyedLock } from "./lock.js";
import { migrations, schema } from "./migrations.js";
import { startReaper } from "./reaper.js";
import { runnerFor, type RunnerConfig } from "./runners/index.js";

export interface SandboxStartDeps {
  db: Db;
  logger: Logger;
  reportFiles: ReportFiles;
  config: SandboxLimits & RunnerConfig & Pick<SandboxConfig, "SWITCHYARD_INTERNAL_SECRET">;
  verifyService: ServiceVerifier;
  health: HealthState;
  requestLogs?: boolean;
}

export interface RunningSandbox {
  app: Express;
  /** Runs commands in a container, for inference in this process. */
  execute(request: SandboxExecRequest): Promise<SandboxExecResponse>;
  stop(): Promise<void>;
}

export async function startSandbox(deps: SandboxStartDeps): Promise<RunningSandbox> {
  const applied = await migrate(deps.db, schema, migrations);
  if (applied.length) deps.logger.info({ applied }, "sandbox migrations applied");
  const runner = runnerFor(deps.config, deps.config.SWITCHYARD_INTERNAL_SECRET);
  const why = await runner.unavailable();
  if (why) deps.logger.error({ runner: runner.name }, `${why}; shell tools will answer 503 until it is fixed and the service restarted`);
  const service: SandboxDeps = {
    db: deps.db,
    runner,
    logger: deps.logger,
    reportFiles: deps.reportFiles,
    limits: deps.config,
    lock: keyedLock(),
    reported: new Map(),
    verifyService: deps.verifyService,
    requestLogs: deps.requestLogs ?? true,
    health: deps.health,
    readiness: { database: () => deps.db.ping() },
  };
  const reaper = startReaper(service, Math.min(30_000, Math.max(250, Math.floor(deps.config.SANDBOX_IDLE_MS / 4))));
  return {
    app: createApp(service),
    execute: (request) => execute(service, request),
    stop: () => reaper.stop(),
  };
}
