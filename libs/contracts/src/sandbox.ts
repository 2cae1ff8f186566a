import { z } from "zod";

/**
 * A container named by the caller (`container_reference`): at most 40 letters, digits, `_` or `-`. The
 * same id reattaches to the same container and its files.
 */
export const containerReference = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/, "must be 1 to 40 letters, digits, '_' or '-', starting with a letter or digit");

/** Which container a command runs in: a named one, the session's, or one for this generation alone. */
export const sandboxContainer = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("reference"), id: containerReference }),
  z.object({ kind: z.literal("session"), key: z.string().min(1).max(256) }),
  z.object({ kind: z.literal("generation"), id: z.string().min(1).max(128) }),
]);
export type SandboxContainer = z.infer<typeof sandboxContainer>;

/** `POST /internal/sandbox/exec`: inference asks the sandbox service to run commands in a container. */
export const sandboxExecRequest = z.object({
  organization_id: z.uuid(),
  workspace_id: z.uuid(),
  container: sandboxContainer,
  /** Start a fresh container for this session (`-r<nonce>`), leaving the old one's files listed. */
  restart: z.boolean().default(false),
  commands: z.array(z.string().min(1).max(16_384)).min(1).max(20),
  /** Per-command wall time; capped by the operator's limit. */
  timeout_ms: z.number().int().min(100).optional(),
  /** How long the container stays warm after its last command; capped by the operator's limit. */
  idle_ms: z.number().int().min(1000).optional(),
});
export type SandboxExecRequest = z.input<typeof sandboxExecRequest>;

export const commandResult = z.object({
  command: z.string(),
  stdout: z.string(),
  stderr: z.string(),
  /** Null when the command did not exit by itself (killed at its time limit, or by a signal). */
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  /** Output past the limit was dropped. */
  truncated: z.boolean(),
  /** Why the sandbox ended the command, in words: a time limit, a signal, a resource limit. */
  error: z.string().optional(),
});
export type CommandResult = z.infer<typeof commandResult>;

export const sandboxExecResponse = z.object({
  container_id: z.string(),
  /** True when this call started a new container in place of an ended or restarted one. */
  started: z.boolean(),
  results: z.array(commandResult),
  /** Files reported to storage after the commands ran. */
  files_synced: z.number().int(),
  /** Set when the files could not be reported (storage down, quota exceeded). */
  sync_error: z.string().optional(),
});
export type SandboxExecResponse = z.infer<typeof sandboxExecResponse>;
