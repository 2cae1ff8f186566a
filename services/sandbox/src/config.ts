import { tmpdir } from "node:os";
import { join } from "node:path";
import { commonEnv, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

export const sandboxEnv = z.object({
  ...commonEnv,
  /** Port of the sandbox service when it runs as its own process. */
  PORT: port(8086),
  /** Base URL of the storage service (container files are reported there) when the sandbox runs as its own process. */
  STORAGE_URL: z.url().default("http://127.0.0.1:8085"),
  /** What isolates commands: `bubblewrap` (Linux namespaces, `bwrap` from Debian's bubblewrap package) or `off`. */
  SANDBOX_RUNNER: z.enum(["bubblewrap", "off"]).default("bubblewrap"),
  /** Where containers' private file trees live; every path up to it must be traversable by other users. */
  SANDBOX_DIR: z.string().default(join(tmpdir(), "switchyard-sandboxes")),
  /** First user id given to containers when the service runs as root; each container gets its own. */
  SANDBOX_UID_BASE: z.coerce.number().int().min(1000).default(200_000),
  /** Longest wall time of one command; a request may ask for less. */
  SANDBOX_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** Address space of each command, in bytes. */
  SANDBOX_MEMORY_BYTES: z.coerce.number().int().min(16 * 1024 * 1024).default(1024 * 1024 * 1024),
  /** Processes and threads a container may have at once (fork bombs end here). */
  SANDBOX_MAX_PROCESSES: z.coerce.number().int().min(4).default(128),
  /** Output kept of each stream (stdout, stderr) of one command, in bytes; the rest is dropped and marked. */
  SANDBOX_OUTPUT_BYTES: z.coerce.number().int().min(1024).default(64 * 1024),
  /** Largest file a command may write, in bytes. */
  SANDBOX_FILE_BYTES: z.coerce.number().int().min(1024).default(64 * 1024 * 1024),
  /** Total bytes of a container's files; past it, files are not reported and the tool result says so. */
  SANDBOX_DISK_BYTES: z.coerce.number().int().min(1024).default(512 * 1024 * 1024),
  /** Default time a container stays warm after its last command before it is removed. */
  SANDBOX_IDLE_MS: z.coerce.number().int().min(1000).default(900_000),
  /** Longest idle time a request may ask for. */
  SANDBOX_MAX_IDLE_MS: z.coerce.number().int().min(1000).default(86_400_000),
  /** Largest file whose content is copied to storage with its metadata. */
  SANDBOX_SYNC_FILE_BYTES: z.coerce.number().int().min(0).default(8 * 1024 * 1024),
});
export type SandboxConfig = z.infer<typeof sandboxEnv>;

export const loadSandboxConfig = (env: Record<string, string | undefined> = process.env): SandboxConfig => parseEnv(sandboxEnv, env);
