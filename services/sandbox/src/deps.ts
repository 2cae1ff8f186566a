import type { Db, HealthState, Logger, ReadinessCheck, ServiceVerifier } from "@switchyard/runtime";
import type { SandboxConfig } from "./config.js";
import type { Lock } from "./lock.js";
import type { SandboxRunner } from "./runners/types.js";

export interface SyncedFile {
  path: string;
  bytes: number;
  modified_at: string;
  content_base64?: string;
}

/** One call of storage's container file sync (see its `syncBody`). */
export interface SyncReport {
  organization_id: string;
  workspace_id: string;
  /** Files new or changed since the last report. */
  files: SyncedFile[];
  /** Paths reported before that are gone. */
  deleted?: string[];
  /** When this sync began: the `created_at` of the files it writes. */
  synced_at?: string;
  /** The last call of a whole-tree report: files it did not write are gone. */
  complete?: boolean;
}

/** Storage's container file sync: in-process in standalone, `POST /internal/containers/{id}/files` otherwise. */
export type ReportFiles = (containerId: string, body: SyncReport) => Promise<number>;

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
  | "SANDBOX_MAX_CONTAINERS"
>;

/** What this replica last reported of a container, and which of the container's reports that was. */
export interface ReportMemory {
  report: number;
  /** path → size and modification time. */
  files: Map<string, string>;
}

export interface SandboxDeps {
  db: Db;
  runner: SandboxRunner;
  logger: Logger;
  reportFiles: ReportFiles;
  limits: SandboxLimits;
  /** One call at a time per container, across replicas. */
  lock: Lock;
  reported: Map<string, ReportMemory>;
  verifyService: ServiceVerifier;
  requestLogs: boolean;
  health: HealthState;
  readiness: Record<string, ReadinessCheck>;
}
