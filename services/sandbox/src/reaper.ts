import { endRemoved, idleContainers, liveContainers, stillIdle, unremovedContainers } from "./containers/records.js";
import type { SandboxDeps } from "./deps.js";
import { removeEnded } from "./exec.js";

type ReaperDeps = Pick<SandboxDeps, "db" | "runner" | "logger" | "lock" | "reported">;

/**
 * Removes containers idle past their time: their processes are long gone (every command ends with its
 * sandbox), so this frees their file trees, cgroups and user ids. Their files stay listed in storage; the
 * session's next command starts a new container. It also finishes removals a restart left to it.
 */
export function startReaper(deps: ReaperDeps, everyMs: number) {
  let running: Promise<void> | undefined;
  const sweep = async () => {
    const removeIdle = (id: string) =>
      deps.lock(id, async () => {
        // Picked before we held it: a call may have run since, and idle time counts from its end.
        if (!(await stillIdle(deps.db, id))) return false;
        await deps.runner.remove(id);
        deps.reported.delete(id);
        await endRemoved(deps.db, id);
        return true;
      });
    const each = async (ids: string[], remove: (id: string) => Promise<boolean>, what: string) => {
      for (const id of ids) {
        try {
          if (await remove(id)) deps.logger.info({ containerId: id }, `${what} sandbox container removed`);
        } catch (error) {
          deps.logger.warn({ err: error, containerId: id }, `could not remove an ${what} sandbox container; the reaper tries again`);
        }
      }
    };
    await each(await idleContainers(deps.db), removeIdle, "idle");
    await each(await unremovedContainers(deps.db), (id) => removeEnded(deps, id), "ended");
    // Leases of holders that died long ago (a lease in use is renewed well within its time).
    await deps.db.query("DELETE FROM sandbox.leases WHERE expires_at < now() - interval '1 hour'");
  };
  const timer = setInterval(() => {
    running ??= sweep()
      .catch((error: unknown) => deps.logger.warn({ err: error }, "sandbox reaper failed; it tries again"))
      .finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  /**
   * Removes every live container now (a command under way finishes first): their trees and cgroups belong
   * to this host, and nothing would come back for them once the process is gone. A session's next command
   * starts a new container; its files stay listed in storage.
   */
  const removeAll = async () => {
    for (const id of await liveContainers(deps.db)) {
      try {
        await deps.lock(id, async () => {
          await deps.runner.remove(id);
          deps.reported.delete(id);
          await endRemoved(deps.db, id);
        });
      } catch (error) {
        deps.logger.warn({ err: error, containerId: id }, "could not remove a sandbox container at shutdown");
      }
    }
  };
  return {
    /** One sweep now, for tests. */
    sweep,
    removeAll,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
