import type { Db, HealthState, Logger, ReadinessCheck, ServiceVerifier } from "@switchyard/runtime";
import type { SandboxConfig } from "./config.js";
import type { SandboxRunner } from "./runners/types.js";

export interface SyncedFile {
  path: string;
  bytes: number;
  modified_at: string;
  content_base64?: string;
}

/** Storage's container file sync: in-process in standalone, `POST /internal/containers/{id}/files` otherwise. */
export type ReportFiles = (containerId: string, body: { organization_id: string; workspace_id: string; files: SyncedFile[] }) => Promise<number>;

export type SandboxLimits = Pick<
  SandboxConfig,
  | "SANDBOX_COMMAND_TIMEOUT_MS"
  | "SANDBOX_MEMORY_BYTES"
  | "SANDBOX_MAX_PROCESSES"
  | "SANDBOX_OUTPUT_BYTES"
  | "SANDBOX_FILE_BYTES"
  | "SANDBOX_DISK_BYTES"
  | "SANDBOX_IDLE_MS"
  | "SANDBOX_MAX_IDLE_MS"
  | "SANDBOX_SYNC_FILE_BYTES"
>;

export interface SandboxDeps {
  db: Db;
  runner: SandboxRunner;
  logger: Logger;
  reportFiles: ReportFiles;
  limits: SandboxLimits;
  /** One command at a time per container, and one resolution at a time per session. */
  lock<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** What was last reported of each container: path → size and modification time. */
  reported: Map<string, Map<string, string>>;
  verifyService: ServiceVerifier;
  requestLogs: boolean;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
