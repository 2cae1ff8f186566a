import type { CommandResult } from "@switchyard/contracts";

export interface RunLimits {
  timeoutMs: number;
  memoryBytes: number;
  maxProcesses: number;
  /** Kept of each of stdout and stderr. */
  outputBytes: number;
  /** Largest file a command may write. */
  fileBytes: number;
}

/** A regular file in a container's tree, relative to its home. */
export interface SandboxFile {
  path: string;
  bytes: number;
  modifiedAt: Date;
}

/**
 * Runs commands in isolated containers, each with a private file tree that outlives its commands until
 * `remove`. One implementation per isolation technology; the service above it does not know which.
 */
export interface SandboxRunner {
  readonly name: string;
  /** Why commands cannot run on this machine, or undefined when they can. */
  unavailable(): Promise<string | undefined>;
  /** Makes the container's file tree when it does not exist yet. */
  open(containerId: string): Promise<void>;
  run(containerId: string, command: string, limits: RunLimits): Promise<CommandResult>;
  /** Regular files of the tree (no links, devices or sockets), at most `max`. */
  files(containerId: string, max: number): Promise<SandboxFile[]>;
  read(containerId: string, path: string): Promise<Buffer>;
  remove(containerId: string): Promise<void>;
}
