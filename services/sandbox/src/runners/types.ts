import type { CommandResult } from "@switchyard/contracts";

export interface RunLimits {
  timeoutMs: number;
  /** Address space of each process. */
  memoryBytes: number;
  /** Processes of the command's user (as root, each container has a user of its own). */
  maxProcesses: number;
  /** Kept of each of stdout and stderr. */
  outputBytes: number;
  /** Largest file a command may write. */
  fileBytes: number;
}

/** What a whole container may use, whatever its commands do: set once when it is opened. */
export interface ContainerLimits {
  memoryBytes: number;
  maxProcesses: number;
  /** CPUs' worth of time at once. */
  cpus: number;
  /** All files of its home. */
  diskBytes: number;
}

/**
 * A live container: its id, and its slot of host user ids (`SANDBOX_UID_BASE` + slot), which no other
 * live container holds, so containers never share a user and with it a process limit.
 */
export interface ContainerSlot {
  id: string;
  uidSlot: number;
}

/** Slots run from 0 to this, exclusive. */
export const uidSlots = 60_000;

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
  /** Limits this machine cannot enforce, in words, for one warning at start. */
  warnings?(): Promise<string[]>;
  /** Makes the container's file tree and limits when they do not exist yet. */
  open(container: ContainerSlot): Promise<void>;
  /** Runs one command; an aborted signal kills it and everything it started. */
  run(container: ContainerSlot, command: string, limits: RunLimits, signal?: AbortSignal): Promise<CommandResult>;
  /** Regular files of the tree (no links, devices or sockets), at most `max`. */
  files(containerId: string, max: number): Promise<SandboxFile[]>;
  read(containerId: string, path: string): Promise<Buffer>;
  remove(containerId: string): Promise<void>;
  /** Lets go of what the runner holds for itself (not its live containers), at stop. */
  close?(): Promise<void>;
}
