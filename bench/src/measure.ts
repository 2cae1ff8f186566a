import { fork, type ChildProcess } from "node:child_process";

export interface Sample {
  latencies: number[];
  seconds: number;
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Runs `count` calls with `concurrency` workers; each call returns its own latency in ms (or undefined to time it whole). */
export async function runLoad(count: number, concurrency: number, call: () => Promise<number | void>): Promise<Sample> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const start = process.hrtime.bigint();
      const measured = await call();
      latencies.push(typeof measured === "number" ? measured : Number(process.hrtime.bigint() - start) / 1e6);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

export interface Usage {
  cpu: NodeJS.CpuUsage;
  rss: number;
  heapUsed?: number;
}

/** A message a child answers to one request of the parent, told apart by its key. */
const answer = <T>(child: ChildProcess, key: string, request: unknown) =>
  new Promise<T>((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (typeof m === "object" && m !== null && key in m) {
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(m as T);
      }
    };
    const onExit = () => reject(new Error(`child exited before answering ${JSON.stringify(request)}`));
    child.on("message", onMessage);
    child.once("exit", onExit);
    child.send(request as string);
  });

/**
 * A benchmark party (the gateway by default) in a child process, so its CPU time and memory are its own. It
 * runs on this process's Node flags, and `nodeFlags` after them (a gateway's: those `npm start` gives it).
 */
export function forkChild<Ready>(env: Record<string, string | undefined>, script = "./gateway-child.js", nodeFlags: readonly string[] = []) {
  const child: ChildProcess = fork(new URL(script, import.meta.url), { stdio: ["ignore", "inherit", "inherit", "ipc"], env, execArgv: [...process.execArgv, ...nodeFlags] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<Ready>((resolve, reject) => {
    child.on("message", (m: unknown) => (m as { ready?: boolean }).ready && resolve(m as Ready));
    child.once("exit", (code, signal) => reject(new Error(`${script} exited with ${code ?? signal} before it was ready`)));
  });
  ready.catch(() => undefined); // a caller that stops before awaiting it must not see an unhandled rejection
  return {
    pid: child.pid!,
    ready,
    usage: () => answer<Usage>(child, "cpu", "cpu"),
    /** Starts the child's CPU profiler (gateway child only). */
    startProfile: () => answer<{ profiling: boolean }>(child, "profiling", { profile: "start" }),
    /** Stops the child's CPU profiler and has it write the profile to `path`. */
    stopProfile: (path: string) => answer<{ profiled: string }>(child, "profiled", { profile: "stop", path }),
    /** Asks the child to stop; SIGKILLs it (this pid only) if it has not exited in time. */
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send("stop");
      else child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export type ForkedChild<Ready> = ReturnType<typeof forkChild<Ready>>;

export const cpuMs = (before: Usage, after: Usage) => (after.cpu.user - before.cpu.user + after.cpu.system - before.cpu.system) / 1000;

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(3));

/** A Markdown table of rows with the same keys. */
export function markdown(rows: Array<Record<string, string | number>>): string {
  const keys = Object.keys(rows[0] ?? {});
  const cell = (v: string | number | undefined) => (typeof v === "number" ? fmt(v) : (v ?? ""));
  return [`| ${keys.join(" | ")} |`, `|${keys.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${keys.map((k) => cell(r[k])).join(" | ")} |`)].join("\n");
}
