import { createHash } from "node:crypto";
import { chmod, chown, lstat, mkdir, readlink, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { CommandResult } from "@switchyard/contracts";
import { limited, spawnCommand } from "./spawn.js";
import { listTree, readInside } from "./tree.js";
import type { RunLimits, SandboxRunner } from "./types.js";

const home = "/home/sandbox";
/** Inside its user namespace every container runs as this user, whatever its id outside. */
const insideId = "1000";

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
  /** First host user id for containers when this process is root. */
  uidBase: number;
}

/**
 * Commands run under bubblewrap: new user, mount, PID, network, IPC and UTS namespaces, so a command sees
 * only the system's programs (read-only), its own home, a private /tmp, and no network but its own
 * loopback. As root, each container also runs as its own unprivileged host user (setpriv), so the process
 * limit is the container's alone and no capability survives. Resource limits are set with prlimit.
 */
export function bubblewrapRunner(options: BubblewrapOptions): SandboxRunner {
  const asRoot = process.getuid?.() === 0;
  const homeOf = (id: string) => join(options.dir, id);
  const uidOf = (id: string) => options.uidBase + (createHash("sha256").update(id).digest().readUInt32BE(0) % 60_000);
  let mounts: Promise<string[]> | undefined;
  let probe: Promise<string | undefined> | undefined;
  let prepared: Promise<void> | undefined;

  const prepare = () =>
    (prepared ??= (async () => {
      await mkdir(join(options.dir, ".etc"), { recursive: true });
      if (asRoot) await checkReachable(options.dir);
      await chmod(options.dir, 0o711);
      await writeFile(join(options.dir, ".etc", "passwd"), `sandbox:x:${insideId}:${insideId}:sandbox:${home}:/bin/sh\n`);
      await writeFile(join(options.dir, ".etc", "group"), `sandbox:x:${insideId}:\n`);
      await chmod(join(options.dir, ".etc"), 0o755);
    })());

  const argv = async (id: string, command: string, limits: RunLimits): Promise<[string, string[]]> => {
    const uid = String(uidOf(id));
    const bwrap = [
      "--unshare-all",
      "--unshare-user",
      "--uid", insideId,
      "--gid", insideId,
      "--hostname", "sandbox",
      "--die-with-parent",
      "--new-session",
      ...(await (mounts ??= systemMounts())),
      "--ro-bind", join(options.dir, ".etc", "passwd"), "/etc/passwd",
      "--ro-bind", join(options.dir, ".etc", "group"), "/etc/group",
      "--proc", "/proc",
      "--dev", "/dev",
      "--size", String(64 * 1024 * 1024), "--tmpfs", "/tmp",
      "--bind", homeOf(id), home,
      "--chdir", home,
      "--clearenv",
      "--setenv", "HOME", home,
      "--setenv", "USER", "sandbox",
      "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
      "--setenv", "LANG", "C.UTF-8",
      "--setenv", "TMPDIR", "/tmp",
      "--",
      ...limited(command, limits),
    ];
    if (!asRoot) return ["bwrap", bwrap];
    return ["setpriv", ["--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--", "bwrap", ...bwrap]];
  };

  const run = async (id: string, command: string, limits: RunLimits): Promise<CommandResult> => {
    const [file, args] = await argv(id, command, limits);
    // Killing bwrap ends its PID namespace, and with it every process the command started. bwrap itself is
    // the namespace's first process, whose environment the command can read: it gets none of ours.
    return spawnCommand(file, args, command, limits, { env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } });
  };

  return {
    name: "bubblewrap",
    unavailable: () =>
      (probe ??= (async () => {
        try {
          await prepare();
          await mkdir(homeOf(".probe"), { recursive: true });
          const result = await run(".probe", "true", { timeoutMs: 10_000, memoryBytes: 256 * 1024 * 1024, maxProcesses: 16, outputBytes: 4096, fileBytes: 1024 });
          if (result.exit_code === 0) return undefined;
          return `bubblewrap cannot start a sandbox here: ${(result.error ?? result.stderr.trim()) || `exit ${String(result.exit_code)}`}`;
        } catch (error) {
          return `bubblewrap cannot start a sandbox here: ${(error as Error).message}`;
        } finally {
          await rm(homeOf(".probe"), { recursive: true, force: true });
        }
      })()),
    async open(id) {
      await prepare();
      const path = homeOf(id);
      await mkdir(path, { recursive: true, mode: 0o700 });
      if (asRoot) await chown(path, uidOf(id), uidOf(id));
    },
    run,
    files: (id, max) => listTree(homeOf(id), max),
    read: (id, path) => readInside(homeOf(id), path),
    async remove(id) {
      await rm(homeOf(id), { recursive: true, force: true });
    },
  };
}
