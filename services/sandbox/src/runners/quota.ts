import { execFile } from "node:child_process";
import { chown, mkdir, readdir, rename, rm, stat, statfs } from "node:fs/promises";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { treeUsage } from "./tree.js";

const exec = promisify(execFile);
const toolEnv = { env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" } };

/** How a container's home is held to its size. */
export interface DiskQuota {
  readonly kind: "tmpfs" | "measured";
  /** Makes `home` ready, owned by `uid` when given; a home made earlier (before a restart) is kept. */
  prepare(home: string, bytes: number, uid: number | undefined): Promise<void>;
  /** Bytes the container may still write; 0 when it is full. */
  room(home: string, bytes: number): Promise<number>;
  /** Undoes `prepare`; the folder itself is left for the caller to remove. */
  release(home: string): Promise<void>;
}

const mounted = async (path: string) => {
  const [own, parent] = await Promise.all([stat(path).catch(() => undefined), stat(dirname(path))]);
  return own !== undefined && own.dev !== parent.dev;
};

/**
 * As root, each home is a tmpfs of the quota's size: the kernel refuses the write that would pass it
 * (ENOSPC, in the command's stderr), however many files or processes write at once, and the host disk
 * never fills. We chose it over a loop-mounted image (needs loop devices and mkfs, which containers
 * rarely have) and XFS project quotas (need the host's filesystem to be XFS mounted with prjquota). Its
 * pages are charged to the memory cgroup of the process that wrote them, the container's, so files
 * count against the container's memory too; they do not survive a reboot of the machine.
 */
export const tmpfsQuota = (): DiskQuota => ({
  kind: "tmpfs",
  async prepare(home, bytes, uid) {
    if (await mounted(home)) return;
    await mkdir(home, { recursive: true, mode: 0o700 });
    // A home from before the quota existed keeps its files: they are copied onto the new tmpfs.
    const earlier = (await readdir(home)).length > 0 ? `${home}.before-quota` : undefined;
    if (earlier) {
      await rename(home, earlier);
      await mkdir(home, { mode: 0o700 });
    }
    const owner = uid === undefined ? "" : `,uid=${uid},gid=${uid}`;
    // One inode per 4 KiB of quota: a million empty files would cost memory without taking any size.
    const inodes = Math.max(1024, Math.floor(bytes / 4096));
    try {
      await exec("mount", ["-t", "tmpfs", "-o", `size=${bytes},nr_inodes=${inodes},mode=0700,nosuid,nodev${owner}`, "tmpfs", home], toolEnv);
    } catch (error) {
      if (earlier) {
        await rm(home, { recursive: true, force: true });
        await rename(earlier, home);
      }
      throw error;
    }
    if (earlier) {
      await exec("cp", ["-a", `${earlier}/.`, `${home}/`], toolEnv).catch(() => undefined); // what does not fit is lost
      await rm(earlier, { recursive: true, force: true });
    }
  },
  async room(home) {
    const fs = await statfs(home);
    return fs.bavail * fs.bsize;
  },
  async release(home) {
    if (!(await mounted(home))) return;
    // A process still holding a file open makes it busy; a lazy unmount lets go once it has died.
    await exec("umount", [home], toolEnv).catch(() => exec("umount", ["-l", home], toolEnv));
  },
});

/**
 * Without the right to mount, the tree is measured before each command: a command may write only as much
 * as is left, per file (RLIMIT_FSIZE), and a container at its quota runs commands that cannot grow a
 * file but can delete them. Several files written by one command can still pass it, by up to that room
 * per file, until the next measure; this is what a service that is not root can do.
 */
export const measuredQuota = (): DiskQuota => ({
  kind: "measured",
  async prepare(home, _bytes, uid) {
    await mkdir(home, { recursive: true, mode: 0o700 });
    if (uid !== undefined) await chown(home, uid, uid);
  },
  async room(home, bytes) {
    return Math.max(0, bytes - (await treeUsage(home, bytes)));
  },
  async release() {},
});

/** tmpfs when this process may mount one (it tries on a folder of its own), measuring otherwise. */
export async function detectQuota(probeDir: string): Promise<{ quota: DiskQuota; why?: string }> {
  if (process.getuid?.() !== 0) return { quota: measuredQuota(), why: "the service is not root, so it cannot mount a tmpfs per container" };
  const quota = tmpfsQuota();
  try {
    await mkdir(probeDir, { recursive: true });
    await quota.prepare(probeDir, 1024 * 1024, undefined);
    if (!(await mounted(probeDir))) throw new Error("the tmpfs did not appear");
    await quota.release(probeDir);
    return { quota };
  } catch (error) {
    return { quota: measuredQuota(), why: `a tmpfs cannot be mounted here (${(error as Error).message.split("\n")[0]})` };
  } finally {
    await rm(probeDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
