import { randomBytes } from "node:crypto";
import type { SandboxExecRequest, SandboxExecResponse } from "@switchyard/contracts";
import { migrate, type Db, type HealthState, type Logger, type ServiceVerifier } from "@switchyard/runtime";
import type { Express } from "express";
import { createApp } from "./app.js";
import type { SandboxConfig } from "./config.js";
import type { ReportFiles, SandboxDeps, SandboxLimits } from "./deps.js";
import { execute } from "./exec.js";
import { replicaLock } from "./lock.js";
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
  /** Runs commands in a container, for inference in this process; aborting `signal` kills them. */
  execute(request: SandboxExecRequest, signal?: AbortSignal): Promise<SandboxExecResponse>;
  stop(): Promise<void>;
}

export async function startSandbox(deps: SandboxStartDeps): Promise<RunningSandbox> {
  const applied = await migrate(deps.db, schema, migrations);
  if (applied.length) deps.logger.info({ applied }, "sandbox migrations applied");
  await deps.db.query("INSERT INTO sandbox.settings (name, value) VALUES ('instance', $1) ON CONFLICT (name) DO NOTHING", [randomBytes(6).toString("hex")]);
  const [instance] = await deps.db.query<{ value: string }>("SELECT value FROM sandbox.settings WHERE name = 'instance'");
  const runner = runnerFor(deps.config, deps.config.SWITCHYARD_INTERNAL_SECRET, instance!.value);
  const why = await runner.unavailable();
  if (runner.name === "off") deps.logger.info("shell tools are turned off (SANDBOX_RUNNER=off): the sandbox refuses every command with a 503");
  else if (why) deps.logger.error({ runner: runner.name }, `${why}; shell tools will answer 503 until it is fixed and the service restarted`);
  else for (const warning of (await runner.warnings?.()) ?? []) deps.logger.warn({ runner: runner.name }, `sandbox limits are weaker on this machine: ${warning}`);
  const service: SandboxDeps = {
    db: deps.db,
    runner,
    logger: deps.logger,
    reportFiles: deps.reportFiles,
    limits: deps.config,
    lock: replicaLock(deps.db, { ttlMs: 30_000, logger: deps.logger }),
    reported: new Map(),
    verifyService: deps.verifyService,
    requestLogs: deps.requestLogs ?? true,
    health: deps.health,
    readiness: { database: () => deps.db.ping() },
  };
  // With shell tools off there is nothing to reap, and no tree of an earlier runner should be ended unremoved.
  const reaper = runner.name === "off" ? undefined : startReaper(service, Math.min(30_000, Math.max(250, Math.floor(deps.config.SANDBOX_IDLE_MS / 4))));
  return {
    app: createApp(service),
    execute: (request, signal) => execute(service, request, signal),
    async stop() {
      await reaper?.stop();
      // Local containers (tmpfs homes, cgroups) end with the process; pods of the Kubernetes runner outlive it.
      if (runner.name === "bubblewrap") await reaper?.removeAll();
      await runner.close?.();
    },
  };
}
