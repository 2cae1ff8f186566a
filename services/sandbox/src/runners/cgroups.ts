import { access, mkdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ContainerLimits } from "./types.js";

/**
 * A cgroup per container, so that its limits hold for all its processes together: RLIMIT_AS and
 * RLIMIT_NPROC count one process, or one user, at a time. cgroup v2 (one hierarchy, production Linux) and
 * v1 (a hierarchy per controller) are both driven through their files.
 */
export interface CgroupDriver {
  readonly version: 1 | 2;
  /** Makes the container's cgroup with its limits; calling it again changes nothing. */
  create(id: string, limits: ContainerLimits): Promise<void>;
  /** The `cgroup.procs` files a process writes its own pid to, to enter the container's cgroup. */
  procsFiles(id: string): string[];
  /** How often the container hit its limits so far. */
  events(id: string): Promise<CgroupEvents>;
  /** Kills every process in the container's cgroup. */
  kill(id: string): Promise<void>;
  /** Kills what is left and removes the cgroup. */
  remove(id: string): Promise<void>;
  /** Removes the folder of this service's cgroups when no container is left in it (at stop). */
  dispose(): Promise<void>;
}

export interface CgroupEvents {
  /** Processes the OOM killer ended because the container was out of memory. */
  oomKills: number;
  /** Forks refused at the process limit. */
  forkRefusals: number;
}

/** What the machine says about its cgroups; tests describe a fake one. */
export interface CgroupProbe {
  /** `/proc/self/mountinfo`. */
  mountinfo: string;
  /** `/proc/self/cgroup`. */
  selfCgroup: string;
  pid: number;
}

interface Mount {
  root: string;
  mountPoint: string;
  type: string;
  options: string[];
}

const unescape = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

function parseMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [type, , superOptions] = right.split(" ");
    if (fields.length < 5 || !type) continue;
    mounts.push({ root: unescape(fields[3]!), mountPoint: unescape(fields[4]!), type, options: (superOptions ?? "").split(",") });
  }
  return mounts;
}

/** Controller (`""` for v2's single hierarchy) → this process's cgroup path. */
function parseSelf(selfCgroup: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of selfCgroup.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of match[1]!.split(",")) paths.set(controller, match[2]!);
  }
  return paths;
}

/** Where this process's cgroup is under a mount, which may show only part of the hierarchy. */
function within(mount: Mount, path: string): string {
  if (mount.root === "/") return join(mount.mountPoint, path);
  if (path === mount.root || path.startsWith(`${mount.root}/`)) return join(mount.mountPoint, path.slice(mount.root.length));
  return mount.mountPoint; // a cgroup namespace shows our own cgroup as the root
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;
const exists = (path: string) => access(path).then(
  () => true,
  () => false,
);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function counter(file: string, name: string): Promise<number> {
  const text = await readFile(file, "utf8").catch(() => "");
  const match = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
  return match ? Number(match[1]) : 0;
}

async function killAll(dirs: string[]) {
  for (let round = 0; round < 40; round += 1) {
    const pids = new Set<number>();
    for (const dir of dirs) {
      const text = await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => "");
      for (const pid of text.split("\n").filter(Boolean)) pids.add(Number(pid));
    }
    if (pids.size === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await pause(25);
  }
}

async function removeDirs(dirs: string[]) {
  for (const dir of dirs) {
    for (let round = 0; ; round += 1) {
      try {
        await rmdir(dir);
        break;
      } catch (error) {
        if (code(error) === "ENOENT") break;
        // A killed process leaves its cgroup a moment after the signal.
        if (code(error) !== "EBUSY" || round >= 40) throw error;
        await pause(25);
      }
    }
  }
}

/** A parent with containers left in it is busy and stays: they are still live. */
async function disposeParents(parents: string[]) {
  for (const parent of parents) await rmdir(parent).catch(() => undefined);
}

function v1Driver(parents: { memory: string; pids: string; cpu?: string | undefined }): CgroupDriver {
  const dirsOf = (id: string) => [parents.memory, parents.pids, ...(parents.cpu ? [parents.cpu] : [])].map((parent) => join(parent, id));
  return {
    version: 1,
    async create(id, limits) {
      for (const dir of dirsOf(id)) await mkdir(dir, { recursive: true });
      const memory = join(parents.memory, id);
      const swap = join(memory, "memory.memsw.limit_in_bytes");
      const hasSwap = await exists(swap);
      // memsw may never be below the memory limit: raise it first when growing, set it again after shrinking.
      if (hasSwap) await writeFile(swap, String(limits.memoryBytes)).catch(() => undefined);
      await writeFile(join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
      if (hasSwap) await writeFile(swap, String(limits.memoryBytes));
      await writeFile(join(parents.pids, id, "pids.max"), String(limits.maxProcesses));
      if (parents.cpu) {
        await writeFile(join(parents.cpu, id, "cpu.cfs_period_us"), "100000");
        await writeFile(join(parents.cpu, id, "cpu.cfs_quota_us"), String(Math.max(1000, Math.round(limits.cpus * 100_000))));
      }
    },
    procsFiles: (id) => dirsOf(id).map((dir) => join(dir, "cgroup.procs")),
    events: async (id) => ({
      oomKills: await counter(join(parents.memory, id, "memory.oom_control"), "oom_kill"),
      forkRefusals: await counter(join(parents.pids, id, "pids.events"), "max"),
    }),
    kill: (id) => killAll(dirsOf(id)),
    async remove(id) {
      await killAll(dirsOf(id));
      await removeDirs(dirsOf(id));
    },
    dispose: () => disposeParents([parents.memory, parents.pids, ...(parents.cpu ? [parents.cpu] : [])]),
  };
}

function v2Driver(parent: string, controllers: string[]): CgroupDriver {
  const cpu = controllers.includes("cpu");
  const dirOf = (id: string) => join(parent, id);
  const kill = async (id: string) => {
    // cgroup.kill (Linux 5.14) kills the whole cgroup at once, forks in flight included.
    if (await exists(join(dirOf(id), "cgroup.kill"))) await writeFile(join(dirOf(id), "cgroup.kill"), "1").catch(() => undefined);
    await killAll([dirOf(id)]);
  };
  return {
    version: 2,
    async create(id, limits) {
      const dir = dirOf(id);
      // The parent may have been removed at another service's stop (it was empty): it is made again.
      await mkdir(parent, { recursive: true });
      await enableControllers(parent, controllers);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "memory.max"), String(limits.memoryBytes));
      // Without this the kernel would swap the container out rather than hold it to its memory.
      if (await exists(join(dir, "memory.swap.max"))) await writeFile(join(dir, "memory.swap.max"), "0");
      await writeFile(join(dir, "pids.max"), String(limits.maxProcesses));
      if (cpu) await writeFile(join(dir, "cpu.max"), `${Math.max(1000, Math.round(limits.cpus * 100_000))} 100000`);
    },
    procsFiles: (id) => [join(dirOf(id), "cgroup.procs")],
    events: async (id) => ({
      oomKills: await counter(join(dirOf(id), "memory.events"), "oom_kill"),
      forkRefusals: await counter(join(dirOf(id), "pids.events"), "max"),
    }),
    kill,
    async remove(id) {
      await kill(id);
      await removeDirs([dirOf(id)]);
    },
    dispose: () => disposeParents([parent]),
  };
}

async function enableControllers(dir: string, controllers: string[]) {
  const enabled = (await readFile(join(dir, "cgroup.subtree_control"), "utf8").catch(() => "")).split(/\s+/);
  const missing = controllers.filter((c) => !enabled.includes(c));
  if (missing.length > 0) await writeFile(join(dir, "cgroup.subtree_control"), missing.map((c) => `+${c}`).join(" "));
}

/**
 * cgroup v2 allows controllers for children only in a cgroup without processes of its own. When ours has
 * us in it (a container's own cgroup namespace, a systemd unit with Delegate=yes), we move into a leaf
 * beside the containers' parent, as container runtimes running inside containers do.
 */
async function setUpV2(base: string, scope: string, controllers: string[], pid: number): Promise<string> {
  try {
    await enableControllers(base, controllers);
  } catch (error) {
    if (code(error) !== "EBUSY") throw error;
    const leaf = join(base, `${scope}-service`);
    await mkdir(leaf, { recursive: true });
    await writeFile(join(leaf, "cgroup.procs"), String(pid));
    await enableControllers(base, controllers);
  }
  const parent = join(base, scope);
  await mkdir(parent, { recursive: true });
  await enableControllers(parent, controllers);
  return parent;
}

/**
 * Finds the cgroup controllers this process may use for its containers and prepares `scope` (a folder
 * of its own under its cgroup, so several services on one machine stay apart). Answers why not otherwise.
 */
export async function detectCgroups(scope: string, probe?: CgroupProbe): Promise<{ driver: CgroupDriver } | { why: string }> {
  const machine = probe ?? {
    mountinfo: await readFile("/proc/self/mountinfo", "utf8").catch(() => ""),
    selfCgroup: await readFile("/proc/self/cgroup", "utf8").catch(() => ""),
    pid: process.pid,
  };
  const mounts = parseMounts(machine.mountinfo);
  const self = parseSelf(machine.selfCgroup);
  try {
    const unified = mounts.find((m) => m.type === "cgroup2");
    const ownV2 = self.get("");
    if (unified && ownV2 !== undefined) {
      const base = within(unified, ownV2);
      const available = (await readFile(join(base, "cgroup.controllers"), "utf8").catch(() => "")).split(/\s+/);
      if (available.includes("memory") && available.includes("pids")) {
        const controllers = ["memory", "pids", ...(available.includes("cpu") ? ["cpu"] : [])];
        const parent = await setUpV2(base, scope, controllers, machine.pid);
        return { driver: v2Driver(parent, controllers) };
      }
    }
    const v1 = (controller: string) => {
      const mount = mounts.find((m) => m.type === "cgroup" && m.options.includes(controller));
      const own = self.get(controller);
      return mount && own !== undefined ? join(within(mount, own), scope) : undefined;
    };
    const [memory, pids, cpu] = [v1("memory"), v1("pids"), v1("cpu")];
    if (memory && pids) {
      for (const dir of [memory, pids, ...(cpu ? [cpu] : [])]) await mkdir(dir, { recursive: true });
      return { driver: v1Driver({ memory, pids, cpu }) };
    }
    return { why: "no cgroup v2 with the memory and pids controllers, nor cgroup v1 memory and pids hierarchies, is mounted" };
  } catch (error) {
    return { why: `its cgroups cannot be written (${(error as Error).message})` };
  }
}
