import { spawn, type SpawnOptions } from "node:child_process";
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

/**
 * Runs a command with its output captured up to the limit and killed at the time limit. `group` kills the
 * whole process group (for commands not inside their own PID namespace).
 */
export function spawnCommand(file: string, args: string[], command: string, limits: RunLimits, options: SpawnOptions & { group?: boolean } = {}): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { ...options, detached: options.group === true, stdio: ["ignore", "pipe", "pipe"] });
    const stdout = capture(child.stdout!, limits.outputBytes);
    const stderr = capture(child.stderr!, limits.outputBytes);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (options.group && child.pid) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          child.kill("SIGKILL"); // the group is already gone
        }
      } else child.kill("SIGKILL");
    }, limits.timeoutMs);
    const done = (code: number | null, signal: NodeJS.Signals | null, failure?: Error) => {
      clearTimeout(timer);
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
      else if (signal) result.error = `Command ended by ${signal}`;
      resolve(result);
    };
    child.on("error", (error) => done(null, null, error));
    child.on("close", (code, signal) => done(code, signal));
  });
}
