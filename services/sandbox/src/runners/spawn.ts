import { spawn, type SpawnOptions } from "node:child_process";
import type { Writable } from "node:stream";
import type { CommandResult } from "@switchyard/contracts";
import { capture } from "./capture.js";
import type { RunLimits } from "./types.js";

/** `prlimit … -- /bin/sh -c <command>`: processes, address space, CPU seconds, file size, open files, no core dumps. */
export const limited = (command: string, limits: RunLimits): string[] => [
  "prlimit",
  `--nproc=${limits.maxProcesses}`,
  `--as=${limits.memoryBytes}`,
  `--cpu=${Math.ceil(limits.timeoutMs / 1000) + 1}`,
  `--fsize=${limits.fileBytes}`,
  "--nofile=256",
  "--core=0",
  "--",
  "/bin/sh",
  "-c",
  command,
];

/** Exit status of the wrapper when it could not enter the container's cgroup (the command never ran). */
export const joinFailed = 125;
const joinScript = `n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "sandbox: cannot enter the container's cgroup ($1)" >&2; exit ${joinFailed}; }; shift; n=$((n - 1)); done; exec "$@"`;

/**
 * `file args` started by a shell that first writes its own pid into each `cgroup.procs` and then execs
 * it: the process is in the container's cgroup before the command can run or fork, which writing the
 * child's pid from here after spawn could not promise.
 */
export function joining(procsFiles: string[], file: string, args: string[]): [string, string[]] {
  if (procsFiles.length === 0) return [file, args];
  return ["/bin/sh", ["-c", joinScript, "sandbox-join", String(procsFiles.length), ...procsFiles, file, ...args]];
}

export type SpawnCommandOptions = SpawnOptions & {
  /** Kill the whole process group (for commands not inside their own PID namespace). */
  group?: boolean;
  /** Aborting kills the command: the request that asked for it went away. */
  signal?: AbortSignal | undefined;
  /** Data the command reads from file descriptors 3, 4, … (whole, then end of file). */
  inputs?: Buffer[];
};

/** Runs a command with its output captured up to the limit and killed at the time limit or on abort. */
export function spawnCommand(file: string, args: string[], command: string, limits: RunLimits, options: SpawnCommandOptions = {}): Promise<CommandResult> {
  const { group, signal, inputs = [], ...spawnOptions } = options;
  const cancelled = (): CommandResult => ({ command, stdout: "", stderr: "", exit_code: null, timed_out: false, truncated: false, error: "Command cancelled: the request that ran it was abandoned" });
  if (signal?.aborted) return Promise.resolve(cancelled());
  return new Promise((resolve) => {
    const child = spawn(file, args, { ...spawnOptions, detached: group === true, stdio: ["ignore", "pipe", "pipe", ...inputs.map(() => "pipe" as const)] });
    inputs.forEach((data, index) => {
      const pipe = child.stdio[3 + index] as Writable | null;
      // A command that exits without reading its input closes the pipe: that is its failure to report, not ours.
      pipe?.on("error", () => undefined);
      pipe?.end(data);
    });
    const stdout = capture(child.stdout!, limits.outputBytes);
    const stderr = capture(child.stderr!, limits.outputBytes);
    let ended: "timeout" | "abort" | undefined;
    const kill = (why: "timeout" | "abort") => {
      ended ??= why;
      if (group && child.pid) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL"); // the group is already gone
        }
      } else child.kill("SIGKILL");
    };
    const timer = setTimeout(() => kill("timeout"), limits.timeoutMs);
    const onAbort = () => kill("abort");
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = (code: number | null, exitSignal: NodeJS.Signals | null, failure?: Error) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (ended === "abort") return resolve({ ...cancelled(), stdout: stdout.text(), stderr: stderr.text(), truncated: stdout.truncated() || stderr.truncated() });
      const timedOut = ended === "timeout";
      const result: CommandResult = {
        command,
        stdout: stdout.text(),
        stderr: stderr.text(),
        exit_code: timedOut || failure ? null : code,
        timed_out: timedOut,
        truncated: stdout.truncated() || stderr.truncated(),
      };
      if (timedOut) result.error = `Command timed out after ${limits.timeoutMs} ms and was killed`;
      else if (failure) result.error = `The sandbox could not start: ${failure.message}`;
      else if (exitSignal) result.error = `Command ended by ${exitSignal}`;
      resolve(result);
    };
    child.on("error", (error) => done(null, null, error));
    child.on("close", (code, exitSignal) => done(code, exitSignal));
  });
}
