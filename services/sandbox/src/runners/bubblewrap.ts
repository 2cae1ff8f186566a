import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, lstat, mkdir, readlink, rename, rm, rmdir, stat } from "node:fs/promises";
import { endianness } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import type { CommandResult } from "@switchyard/contracts";
import { detectCgroups, type CgroupDriver } from "./cgroups.js";
import { detectQuota, type DiskQuota } from "./quota.js";
import { seccompArch, seccompFilter } from "./seccomp.js";
import { joinFailed, joining, limited, spawnCommand } from "./spawn.js";
import { listTree, readInside } from "./tree.js";
import { uidSlots, type ContainerLimits, type ContainerSlot, type RunLimits, type SandboxRunner } from "./types.js";

const home = "/home/sandbox";
/** Inside its user namespace every container runs as this user, whatever its id outside. */
const insideId = "1000";
const hostPath = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
const passwd = Buffer.from(`sandbox:x:${insideId}:${insideId}:sandbox:${home}:/bin/sh\n`);
const group = Buffer.from(`sandbox:x:${insideId}:\n`);
const exec = promisify(execFile);
const probeLimits: RunLimits = { timeoutMs: 10_000, memoryBytes: 256 * 1024 * 1024, maxProcesses: 16, outputBytes: 4096, fileBytes: 1024 };

/** Host folders the sandbox sees read-only: programs and libraries, never the host's data. */
async function systemMounts(): Promise<string[]> {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const name of ["bin", "lib", "lib64", "lib32", "sbin"]) {
    const stat = await lstat(`/${name}`).catch(() => undefined);
    if (stat?.isSymbolicLink()) args.push("--symlink", await readlink(`/${name}`), `/${name}`);
    else if (stat?.isDirectory()) args.push("--ro-bind", `/${name}`, `/${name}`);
  }
  // Debian's alternatives (python3, awk, editors) are links through /etc/alternatives.
  if (await lstat("/etc/alternatives").catch(() => undefined)) args.push("--ro-bind", "/etc/alternatives", "/etc/alternatives");
  return args;
}

/** Containers run as other users: every folder above SANDBOX_DIR must let them pass. */
async function checkReachable(dir: string) {
  for (let path = resolve(dir); ; path = dirname(path)) {
    const mode = (await stat(path)).mode;
    if (path !== resolve(dir) && (mode & 0o001) === 0) throw new Error(`SANDBOX_DIR ${dir} is inside ${path}, which other users cannot enter (mode ${(mode & 0o777).toString(8)})`);
    if (path === dirname(path)) return;
  }
}

export interface BubblewrapOptions {
  /** Where containers' trees live. */
  dir: string;
  /** This database's name for its containers on the machine: their trees are in a folder of their own. */
  instance?: string;
  /** First host user id for containers when this process is root. */
  uidBase: number;
  /** What each container may use in all, whatever its commands do. */
  container: ContainerLimits;
  /** `off` keeps the per-process limits only. */
  cgroups: "auto" | "off";
  /** How homes are held to their size; found out at start unless given (tests give the fallback). */
  quota?: DiskQuota;
}

interface Setup {
  /** The seccomp program bwrap loads before it starts the command. */
  filter: Buffer;
  cgroups: CgroupDriver | undefined;
  quota: DiskQuota;
  warnings: string[];
}

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/**
 * Commands run under bubblewrap: new user, mount, PID, network, IPC and UTS namespaces, so a command sees
 * only the system's programs (read-only), its own home, a private /tmp, and no network but its own
 * loopback. As root, each container also runs as its own unprivileged host user (setpriv), so no
 * capability survives. A seccomp filter (seccomp.ts) and `--disable-userns` keep it from making
 * namespaces or mounts, tracing, or reaching the kernel's keyring, BPF and modules. Limits hold per
 * container where the machine allows it (a cgroup for memory, processes and CPU; a tmpfs home for disk)
 * and per process always (prlimit).
 */
export function bubblewrapRunner(options: BubblewrapOptions): SandboxRunner {
  const asRoot = process.getuid?.() === 0;
  const limits = options.container;
  // Not a container id (those never start with a dot), so no container can take the folder's name.
  const root = options.instance ? join(options.dir, `.i-${options.instance}`) : options.dir;
  const homeOf = (id: string) => join(root, id);
  const uidOf = (slot: ContainerSlot) => options.uidBase + slot.uidSlot;
  // Several services (or test runs) on one machine keep their cgroups apart by their SANDBOX_DIR.
  const scope = `switchyard-${createHash("sha256").update(resolve(root)).digest("hex").slice(0, 10)}`;
  let mounts: Promise<string[]> | undefined;
  let probe: Promise<string | undefined> | undefined;
  let prepared: Promise<Setup> | undefined;

  const setup = () =>
    (prepared ??= (async () => {
      await mkdir(root, { recursive: true });
      if (asRoot) await checkReachable(root);
      await chmod(options.dir, 0o711);
      await chmod(root, 0o711);
      const arch = seccompArch(process.arch, endianness());
      if (typeof arch === "object") throw new Error(`no seccomp filter: ${arch.why}`);
      const filter = seccompFilter(arch);
      const warnings: string[] = [];
      if (!asRoot) warnings.push("the sandbox service is not root: every container runs as its user, so they share one process limit (RLIMIT_NPROC)");
      let cgroups: CgroupDriver | undefined;
      if (options.cgroups === "auto") {
        const found = await detectCgroups(scope);
        if ("driver" in found) cgroups = found.driver;
        else warnings.push(`containers get no cgroup of their own, because ${found.why}: memory, processes and CPU are limited per process only (prlimit), so the processes of one container can together use more`);
      }
      let quota = options.quota;
      if (!quota) {
        const found = await detectQuota(join(root, ".quota-probe"));
        quota = found.quota;
        if (found.why) warnings.push(`container homes are not size-limited filesystems, because ${found.why}: each home is measured before a command instead, and one command can write past the quota`);
      }
      return { filter, cgroups, quota, warnings };
    })());

  /**
   * bwrap's options go in on file descriptor 3 (`--args`), not on its command line: its first process in
   * the container is a copy of it, whose command line any command there can read, and the options name
   * the host's folders. The seccomp program follows on descriptor 4, and the files bwrap makes inside on
   * 5 to 7 (`--ro-bind-data`): a bind of a host file would show its host path in /proc/self/mountinfo.
   */
  const argv = async (slot: ContainerSlot, command: string, runLimits: RunLimits): Promise<{ file: string; args: string[]; inputs: Buffer[] }> => {
    const uid = String(uidOf(slot));
    const { filter } = await setup();
    const bwrapOptions = [
      "--unshare-all",
      "--unshare-user",
      // No namespaces inside: the kernel refuses a nested user namespace, and the filter refuses the calls.
      "--disable-userns",
      "--seccomp", "4",
      "--uid", insideId,
      "--gid", insideId,
      "--hostname", "sandbox",
      "--die-with-parent",
      "--new-session",
      ...(await (mounts ??= systemMounts())),
      "--perms", "0444", "--ro-bind-data", "5", "/etc/passwd",
      "--perms", "0444", "--ro-bind-data", "6", "/etc/group",
      // A procfs of the container's PID namespace: its own processes only.
      "--proc", "/proc",
      // Empty: the kernel's boot arguments describe the host, not the container.
      "--perms", "0444", "--ro-bind-data", "7", "/proc/cmdline",
      "--dev", "/dev",
      "--size", String(64 * 1024 * 1024), "--tmpfs", "/tmp",
      "--bind", homeOf(slot.id), home,
      "--chdir", home,
      "--clearenv",
      "--setenv", "HOME", home,
      "--setenv", "USER", "sandbox",
      "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
      "--setenv", "LANG", "C.UTF-8",
      "--setenv", "TMPDIR", "/tmp",
    ];
    const inputs = [Buffer.from(bwrapOptions.map((option) => `${option}\0`).join("")), filter, passwd, group, Buffer.alloc(0)];
    const bwrap = ["--args", "3", "--", ...limited(command, runLimits)];
    if (!asRoot) return { file: "bwrap", args: bwrap, inputs };
    return { file: "setpriv", args: ["--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--", "bwrap", ...bwrap], inputs };
  };

  /**
   * bwrap's first process in the container keeps the environment it was started with, which any command
   * there can read (/proc/1/environ): it gets a PATH and nothing of ours, and starts in / so no shell on the
   * way puts the service's working directory in PWD.
   */
  const start = async (procsFiles: string[], slot: ContainerSlot, command: string, runLimits: RunLimits, signal?: AbortSignal) => {
    const { file, args, inputs } = await argv(slot, command, runLimits);
    return spawnCommand(...joining(procsFiles, file, args), command, runLimits, { env: hostPath, cwd: "/", inputs, signal });
  };

  /** Notes on the limits the command ran into, which its exit status alone would not explain. */
  const limitNotes = async (id: string, cgroups: CgroupDriver | undefined, quota: DiskQuota, before: { oomKills: number; forkRefusals: number } | undefined) => {
    const notes: string[] = [];
    if (cgroups && before) {
      const after = await cgroups.events(id);
      if (after.oomKills > before.oomKills) notes.push(`The container ran out of memory (its limit is ${mib(limits.memoryBytes)}, files of its home included) and the kernel killed ${after.oomKills - before.oomKills} of its processes.`);
      if (after.forkRefusals > before.forkRefusals) notes.push(`The container reached its limit of ${limits.maxProcesses} processes; further forks failed.`);
    }
    if ((await quota.room(homeOf(id), limits.diskBytes).catch(() => 1)) <= 0) {
      notes.push(
        quota.kind === "tmpfs"
          ? `The container's files reached its disk quota of ${mib(limits.diskBytes)}; writes past it failed (No space left on device). Delete files to make room.`
          : `The container's files take its whole disk quota of ${mib(limits.diskBytes)}; until some are deleted, its commands cannot write to files (a command that only deletes frees room for the next).`,
      );
    }
    return notes;
  };

  const run = async (slot: ContainerSlot, command: string, runLimits: RunLimits, signal?: AbortSignal): Promise<CommandResult> => {
    const { cgroups, quota } = await setup();
    const id = slot.id;
    // The measured fallback: a command may grow no file past the room that is left.
    const room = quota.kind === "measured" ? await quota.room(homeOf(id), limits.diskBytes) : Number.POSITIVE_INFINITY;
    const before = cgroups ? await cgroups.events(id) : undefined;
    // Killing bwrap ends its PID namespace, and with it every process the command started.
    const result = await start(cgroups?.procsFiles(id) ?? [], slot, command, { ...runLimits, fileBytes: Math.min(runLimits.fileBytes, room) }, signal);
    if (cgroups && (result.timed_out || signal?.aborted)) await cgroups.kill(id);
    if (result.exit_code === joinFailed && result.stderr.startsWith("sandbox: cannot enter")) {
      return { ...result, exit_code: null, error: "The sandbox could not put the command in its container's cgroup; it did not run" };
    }
    const notes = await limitNotes(id, cgroups, quota, before);
    if (notes.length > 0) result.error = [result.error?.replace(/([^.])$/, "$1."), ...notes].filter(Boolean).join(" ");
    return result;
  };

  return {
    name: "bubblewrap",
    unavailable: () =>
      (probe ??= (async () => {
        const slot = { id: ".probe", uidSlot: uidSlots }; // a user no container has
        try {
          await setup();
          await mkdir(homeOf(slot.id), { recursive: true });
          const result = await start([], slot, "true", probeLimits);
          if (result.exit_code === 0) return undefined;
          return `bubblewrap cannot start a sandbox here: ${(result.error ?? result.stderr.trim()) || `exit ${String(result.exit_code)}`}`;
        } catch (error) {
          return `bubblewrap cannot start a sandbox here: ${(error as Error).message}`;
        } finally {
          await rm(homeOf(slot.id), { recursive: true, force: true });
        }
      })()),
    warnings: async () => (await setup()).warnings,
    async open(slot) {
      const { cgroups, quota } = await setup();
      const path = homeOf(slot.id);
      const uid = asRoot ? uidOf(slot) : undefined;
      // A container from before trees had a folder per instance moves into it, files and all.
      if (root !== options.dir && !(await stat(path).catch(() => undefined))) await rename(join(options.dir, slot.id), path).catch(() => undefined);
      await quota.prepare(path, limits.diskBytes, uid);
      // A container given a new user (its slot changed) takes its files along.
      if (uid !== undefined && (await stat(path)).uid !== uid) await exec("chown", ["-R", `${uid}:${uid}`, path], { env: hostPath });
      if (cgroups) await cgroups.create(slot.id, limits);
    },
    run,
    files: (id, max) => listTree(homeOf(id), max),
    read: (id, path) => readInside(homeOf(id), path),
    async remove(id) {
      const { cgroups, quota } = await setup();
      if (cgroups) await cgroups.kill(id);
      await quota.release(homeOf(id));
      await rm(homeOf(id), { recursive: true, force: true });
      if (cgroups) await cgroups.remove(id);
    },
    async close() {
      if (prepared) await (await prepared).cgroups?.dispose();
      // A folder with containers still in it stays for the next start: they are live.
      if (root !== options.dir) await rmdir(root).catch(() => undefined);
    },
  };
}
