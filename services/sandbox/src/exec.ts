import { sandboxExecRequest, type CommandResult, type SandboxExecResponse } from "@switchyard/contracts";
import { HttpError, parseInput } from "@switchyard/runtime";
import { liveSlot, releaseSlot, resolveContainer, stillUnremoved, touch } from "./containers/records.js";
import type { SandboxDeps } from "./deps.js";
import { reportFiles } from "./report.js";

/** Removes an ended container's processes and files, under its lock, and frees its slot. */
export async function removeEnded(deps: Pick<SandboxDeps, "db" | "runner" | "lock" | "reported">, id: string): Promise<boolean> {
  return deps.lock(id, async () => {
    if (!(await stillUnremoved(deps.db, id))) return false;
    await deps.runner.remove(id);
    deps.reported.delete(id);
    await releaseSlot(deps.db, id);
    return true;
  });
}

/**
 * Runs a request's commands in order in its container (made or revived first), then reports the files
 * the commands left to storage. A failing command does not stop the next: each result says what happened.
 * An aborted signal (the caller went away) kills the running command and skips the rest.
 */
export async function execute(deps: SandboxDeps, input: unknown, signal?: AbortSignal): Promise<SandboxExecResponse> {
  const request = parseInput(sandboxExecRequest, input, "body");
  const why = await deps.runner.unavailable();
  if (why) throw new HttpError("unavailable", why);
  const { limits } = deps;
  const idleMs = Math.min(request.idle_ms ?? limits.SANDBOX_IDLE_MS, limits.SANDBOX_MAX_IDLE_MS);
  const owner = { organizationId: request.organization_id, workspaceId: request.workspace_id };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    signal?.throwIfAborted();
    // A restart happens once: were its new container reaped before we held it, the next attempt reuses the session's latest.
    const resolved = await resolveContainer(deps.db, owner, request.container, request.restart && attempt === 0, idleMs, limits.SANDBOX_MAX_CONTAINERS);
    const { id, started } = resolved;
    if (resolved.replaced) {
      const replaced = resolved.replaced;
      // Its files stay listed; its processes and tree go now (or by the reaper, should this fail).
      void removeEnded(deps, replaced).catch((error: unknown) => deps.logger.warn({ err: error, containerId: replaced }, "could not remove a replaced sandbox container; the reaper tries again"));
    }
    const answer = await deps.lock(
      id,
      async (): Promise<SandboxExecResponse | undefined> => {
        // The reaper may have removed it between its resolution and now: then it is resolved again.
        const uidSlot = await liveSlot(deps.db, id);
        if (uidSlot === undefined) return undefined;
        try {
          if (started) {
            await deps.runner.remove(id);
            deps.reported.delete(id);
          }
          const container = { id, uidSlot };
          await deps.runner.open(container);
          const timeoutMs = Math.min(request.timeout_ms ?? limits.SANDBOX_COMMAND_TIMEOUT_MS, limits.SANDBOX_COMMAND_TIMEOUT_MS);
          const results: CommandResult[] = [];
          for (const command of request.commands) {
            if (signal?.aborted) break;
            results.push(
              await deps.runner.run(
                container,
                command,
                { timeoutMs, memoryBytes: limits.SANDBOX_MEMORY_BYTES, maxProcesses: limits.SANDBOX_MAX_PROCESSES, outputBytes: limits.SANDBOX_OUTPUT_BYTES, fileBytes: limits.SANDBOX_FILE_BYTES },
                signal,
              ),
            );
          }
          // Its caller is gone: the files are reported by the container's next call.
          signal?.throwIfAborted();
          const report = await reportFiles(deps, id, owner);
          deps.logger.info({ containerId: id, commands: results.length, started, synced: report.synced }, "sandbox commands ran");
          return { container_id: id, started, results, files_synced: report.synced, ...(report.error ? { sync_error: report.error } : {}) };
        } finally {
          // Idle time counts from the end of a call too, so a call longer than it does not leave its container reapable.
          await touch(deps.db, id);
        }
      },
      signal,
    );
    if (answer) return answer;
    deps.logger.info({ containerId: id }, "sandbox container was removed before its call could run; resolving it again");
  }
  throw new HttpError("unavailable", "The sandbox container kept being removed before its commands could run; try again");
}
