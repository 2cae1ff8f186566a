import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { limited, spawnCommand } from "./spawn.js";
import { listTree, readInside } from "./tree.js";
import type { SandboxRunner } from "./types.js";

/**
 * Commands run as this process's user, in a folder per container, under prlimit and in their own process
 * group. No isolation of its own: it is what runs inside a sandbox pod, where the pod is the isolation.
 */
export function directRunner(dir: string): SandboxRunner {
  const homeOf = (id: string) => join(dir, id);
  return {
    name: "direct",
    unavailable: async () => undefined,
    async open(container) {
      await mkdir(homeOf(container.id), { recursive: true, mode: 0o700 });
    },
    run: (container, command, limits, signal) =>
      spawnCommand("prlimit", limited(command, limits).slice(1), command, limits, {
        cwd: homeOf(container.id),
        env: { HOME: homeOf(container.id), PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8", TMPDIR: "/tmp" },
        group: true,
        signal,
      }),
    files: (id, max) => listTree(homeOf(id), max),
    read: (id, path) => readInside(homeOf(id), path),
    async remove(id) {
      await rm(homeOf(id), { recursive: true, force: true });
    },
  };
}
