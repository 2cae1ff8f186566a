import { sandboxExecRequest, type CommandResult, type SandboxExecResponse } from "@switchyard/contracts";
import { HttpError, parseInput } from "@switchyard/runtime";
import { resolveContainer, touch } from "./containers/records.js";
import type { SandboxDeps } from "./deps.js";
import { reportFiles } from "./report.js";

/**
 * Runs a request's commands in order in its container (made or revived first), then reports the files
 * the commands left to storage. A failing command does not stop the next: each result says what happened.
 */
export async function execute(deps: SandboxDeps, input: unknown): Promise<SandboxExecResponse> {
  const request = parseInput(sandboxExecRequest, input, "body");
  const why = await deps.runner.unavailable();
  if (why) throw new HttpError("unavailable", why);
  const { limits } = deps;
  const idleMs = Math.min(request.idle_ms ?? limits.SANDBOX_IDLE_MS, limits.SANDBOX_MAX_IDLE_MS);
  const owner = { organizationId: request.organization_id, workspaceId: request.workspace_id };
  const origin = request.container.kind === "session" ? `${request.workspace_id}:session:${request.container.key}` : `${request.container.kind}:${request.container.id}`;
  const { id, started } = await deps.lock(origin, () => resolveContainer(deps.db, owner, request.container, request.restart, idleMs));
  return deps.lock(id, async () => {
    if (started) {
      await deps.runner.remove(id);
      deps.reported.delete(id);
    }
    await deps.runner.open(id);
    const timeoutMs = Math.min(request.timeout_ms ?? limits.SANDBOX_COMMAND_TIMEOUT_MS, limits.SANDBOX_COMMAND_TIMEOUT_MS);
    const results: CommandResult[] = [];
    for (const command of request.commands) {
      results.push(
        await deps.runner.run(id, command, {
          timeoutMs,
          memoryBytes: limits.SANDBOX_MEMORY_BYTES,
          maxProcesses: limits.SANDBOX_MAX_PROCESSES,
          outputBytes: limits.SANDBOX_OUTPUT_BYTES,
          fileBytes: limits.SANDBOX_FILE_BYTES,
        }),
      );
    }
    await touch(deps.db, id);
    const report = await reportFiles(deps, id, owner);
    deps.logger.info({ containerId: id, commands: results.length, started, synced: report.synced }, "sandbox commands ran");
    return { container_id: id, started, results, files_synced: report.synced, ...(report.error ? { sync_error: report.error } : {}) };
  });
}
