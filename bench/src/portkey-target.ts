import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { benchConfig } from "./config.js";
import { freePortBlock } from "./free-port.js";
import { listeningAddresses } from "./proc-stats.js";
import { signalProfileEnv, startSignalProfiles, stopSignalProfiles } from "./signal-profile.js";
import { childEnv, type Target } from "./targets.js";

/** The Portkey gateway's start script, found through its package (the `bin` it declares). */
function portkeyScript(): string {
  const packageJson = createRequire(import.meta.url).resolve("@portkey-ai/gateway/package.json");
  const { bin } = JSON.parse(readFileSync(packageJson, "utf8")) as { bin: string | Record<string, string> };
  const script = typeof bin === "string" ? bin : Object.values(bin)[0];
  if (!script) throw new Error("@portkey-ai/gateway declares no start script");
  return join(dirname(packageJson), script);
}

const connects = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

/**
 * The Portkey gateway (`@portkey-ai/gateway` from the npm registry) in its own process, headless, with a
 * preload that keeps it on 127.0.0.1. Requests name the upstream in `x-portkey-custom-host`.
 */
export async function startPortkeyTarget(upstreamUrl: string): Promise<Target> {
  const port = await freePortBlock(1);
  const profileDir = benchConfig.cpuProfileDir ? join(benchConfig.cpuProfileDir, "portkey") : undefined;
  if (profileDir) await mkdir(profileDir, { recursive: true });
  const preload = new URL("./listen-local.js", import.meta.url).href;
  const child = spawn(process.execPath, ["--import", preload, portkeyScript(), `--port=${port}`, "--headless"], {
    env: childEnv({ NODE_ENV: "production", ...(profileDir ? signalProfileEnv(profileDir) : {}) }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString("utf8")).slice(-4000));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const deadline = Date.now() + 30_000;
    while (!(await connects(port))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
      if (Date.now() > deadline) throw new Error("did not listen within 30 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const addresses = listeningAddresses(port);
    if (addresses.some((address) => address !== "127.0.0.1")) throw new Error(`listens on ${addresses.join(", ")}, not only on 127.0.0.1`);
    return {
      name: "portkey",
      origin: `http://127.0.0.1:${port}`,
      headers: { "x-portkey-provider": "openai", "x-portkey-custom-host": upstreamUrl, authorization: "Bearer sk-bench" },
      routes: { chat: { path: "/v1/chat/completions", model: "bench" } },
      pids: () => (child.pid ? [child.pid] : []),
      ...(profileDir && {
        startProfile: async () => startSignalProfiles([child.pid!]),
        stopProfile: (label: string) => stopSignalProfiles(profileDir, [child.pid!], label),
      }),
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(`Portkey gateway: ${error instanceof Error ? error.message : String(error)}\n${output}`, { cause: error });
  }
}
