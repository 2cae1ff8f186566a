import { endContainer, idleContainers } from "./containers/records.js";
import type { SandboxDeps } from "./deps.js";

/**
 * Removes containers idle past their time: their processes are long gone (every command ends with its
 * sandbox), so this frees their file trees. Their files stay listed in storage; the session's next
 * command starts a new container.
 */
export function startReaper(deps: Pick<SandboxDeps, "db" | "runner" | "logger" | "lock" | "reported">, everyMs: number) {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    for (const id of await idleContainers(deps.db)) {
      await deps.lock(id, async () => {
        await deps.runner.remove(id);
        deps.reported.delete(id);
        await endContainer(deps.db, id);
      });
      deps.logger.info({ containerId: id }, "idle sandbox container removed");
    }
  };
  const timer = setInterval(() => {
    running ??= sweep()
      .catch((error: unknown) => deps.logger.warn({ err: error }, "sandbox reaper failed; it tries again"))
      .finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
