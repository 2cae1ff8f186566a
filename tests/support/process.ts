import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { serverNodeFlags } from "@switchyard/runtime";
import { testEnv } from "./config.js";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export interface TestProcess {
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves when the output matches, or rejects after the timeout with what was printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL if it has not exited in time; only this pid is touched. */
  stop(timeoutMs?: number): Promise<number | null>;
}

/**
 * Starts a built entry point (`services/<name>/dist/main.js`) with exactly the given environment, on this Node
 * or `node` with the V8 flags `npm start` and the images give a server, in the repository or the folder `cwd`.
 */
export function startProcess(entry: string, env: Record<string, string>, node: string = process.execPath, cwd: string = repoRoot): TestProcess {
  const child = spawn(node, [...serverNodeFlags, entry], {
    cwd,
    env: { PATH: testEnv.path, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const waiters = new Set<() => void>();
  const append = (chunk: Buffer) => {
    text += chunk.toString("utf8");
    for (const wake of waiters) wake();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => text,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(text);
          if (match) {
            cleanup();
            resolve(match);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out waiting for ${pattern} from ${entry}; output:\n${text}`));
        }, timeoutMs);
        const onExit = () => {
          cleanup();
          reject(new Error(`${entry} exited while waiting for ${pattern}; output:\n${text}`));
        };
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
          child.off("exit", onExit);
        };
        waiters.add(check);
        child.once("exit", onExit);
        check();
      });
    },
    async stop(timeoutMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Ports for the processes tests start come from below the kernel's ephemeral range (Linux 32768–60999,
 * macOS 49152–65535): a port handed out there can be taken as the local end of an outgoing connection while
 * its process starts or restarts, and then `listen` fails with EADDRINUSE. Nothing takes these by itself.
 */
const portRange = { low: 20_000, high: 32_000 };

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });

/** Ports this test file was given, so that calls made side by side never hand out the same one twice. */
const handedOut = new Set<number>();

/** The first port of a block of `size` consecutive ports that nothing listens on. */
export async function freePortBlock(size: number): Promise<number> {
  for (;;) {
    const base = portRange.low + Math.floor(Math.random() * (portRange.high - portRange.low - size));
    const block = Array.from({ length: size }, (_, i) => base + i);
    if (block.some((port) => handedOut.has(port))) continue;
    block.forEach((port) => handedOut.add(port));
    if ((await Promise.all(block.map(isFree))).every(Boolean)) return base;
  }
}

export const freePort = () => freePortBlock(1);
