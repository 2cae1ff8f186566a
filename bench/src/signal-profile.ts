import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** What a process needs in its environment for `cpu-profile-preload` to profile it on SIGUSR2. */
export const signalProfileEnv = (dir: string) => ({
  NODE_OPTIONS: `--import=${new URL("./cpu-profile-preload.js", import.meta.url).href}`,
  BENCH_SIGNAL_PROFILE_DIR: dir,
});

const signal = (pids: number[]) => {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGUSR2");
    } catch {
      // gone: a restarted process is not profiled
    }
  }
};

/** Starts the profiles of processes started with `signalProfileEnv(dir)` (SIGUSR2 toggles them). */
export function startSignalProfiles(pids: number[]): void {
  signal(pids);
}

/** Stops them; each writes `<dir>/<label>-<pid>-<name>.cpuprofile`. Resolves when every file is there (10 s at most). */
export async function stopSignalProfiles(dir: string, pids: number[], label: string): Promise<string> {
  await writeFile(join(dir, "label"), label);
  signal(pids);
  const deadline = Date.now() + 10_000;
  for (const pid of pids) {
    while (!(await readdir(dir)).some((f) => f.startsWith(`${label}-${pid}-`) && f.endsWith(".cpuprofile"))) {
      if (Date.now() > deadline) throw new Error(`process ${pid} wrote no CPU profile in ${dir}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return join(dir, `${label}-*.cpuprofile`);
}
