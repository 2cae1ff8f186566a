import { fork, type ChildProcess } from "node:child_process";
import { benchConfig } from "./config.js";

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
}

/** A benchmark party (the gateway by default) in a child process, so its CPU time and memory are its own. */
export function forkChild<Ready>(env: Record<string, string | undefined>, script = "./gateway-child.js") {
  const execArgv = benchConfig.cpuProfileDir && script === "./gateway-child.js" ? ["--cpu-prof", "--cpu-prof-dir", benchConfig.cpuProfileDir] : [];
  const child: ChildProcess = fork(new URL(script, import.meta.url), { stdio: ["ignore", "inherit", "inherit", "ipc"], env, execArgv });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const ready = new Promise<Ready>((resolve) => child.on("message", (m: unknown) => (m as { ready?: boolean }).ready && resolve(m as Ready)));
  const usage = () =>
    new Promise<Usage>((resolve) => {
      const onMessage = (m: unknown) => {
        if ((m as Partial<Usage>).cpu) {
          child.off("message", onMessage);
          resolve(m as Usage);
        }
      };
      child.on("message", onMessage);
      child.send("cpu");
    });
  return {
    ready,
    usage,
    async stop() {
      child.send("stop");
      await exited;
    },
  };
}

export const cpuMs = (before: Usage, after: Usage) => (after.cpu.user - before.cpu.user + after.cpu.system - before.cpu.system) / 1000;

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(3));

/** A Markdown table of rows with the same keys. */
export function markdown(rows: Array<Record<string, string | number>>): string {
  const keys = Object.keys(rows[0] ?? {});
  const cell = (v: string | number) => (typeof v === "number" ? fmt(v) : v);
  return [`| ${keys.join(" | ")} |`, `|${keys.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${keys.map((k) => cell(r[k]!)).join(" | ")} |`)].join("\n");
}
