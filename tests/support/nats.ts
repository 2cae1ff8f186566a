import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testEnv } from "./config.js";
import { freePort } from "./process.js";

export interface TestNats {
  url: string;
  port: number;
  /** Stops a server this helper started and removes its store (never the shared one named by NATS_URL). */
  stop(): Promise<void>;
  /** Outage tests, private servers only: kill abruptly, keeping port and store for `restart`. */
  kill?(): Promise<void>;
  /** Outage tests, private servers only: start again on the same port and store. */
  restart?(): Promise<void>;
}

export const natsServerBinary = "/usr/sbin/nats-server";
const startTimeoutMs = 10_000;

const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

const running = (child: ChildProcess | undefined): child is ChildProcess =>
  child !== undefined && child.exitCode === null && child.signalCode === null;

async function terminate(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  const force = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(force);
}

/**
 * NATS_URL when set (unless `private`); else a nats-server with JetStream of its own, on a free port with a
 * temporary store. Tests that stop and restart the server ask for a private one, never the shared server.
 */
export async function startTestNats(options: { private?: boolean } = {}): Promise<TestNats> {
  if (testEnv.natsUrl && !options.private) {
    return { url: testEnv.natsUrl, port: Number(new URL(testEnv.natsUrl).port || 4222), stop: async () => {} };
  }
  if (!existsSync(natsServerBinary)) {
    throw new Error(`NATS tests need a server: set NATS_URL, or install nats-server at ${natsServerBinary}`);
  }
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), "switchyard-nats-"));
  let child: ChildProcess | undefined;
  // If the test run dies without cleaning up, this server must not outlive it.
  const killOnExit = () => {
    if (running(child)) child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);

  const start = async () => {
    let output = "";
    const spawned = spawn(natsServerBinary, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: ["ignore", "ignore", "pipe"] });
    child = spawned;
    spawned.stderr?.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")));
    let spawnError: Error | undefined;
    spawned.once("error", (error) => void (spawnError = error));
    const deadline = Date.now() + startTimeoutMs;
    while (!(await accepting(port))) {
      if (spawnError) throw spawnError;
      if (!running(spawned)) throw new Error(`nats-server exited during startup:\n${output}`);
      if (Date.now() > deadline) {
        await terminate(spawned, "SIGKILL");
        throw new Error(`nats-server did not accept connections on port ${port} within ${startTimeoutMs} ms:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  try {
    await start();
  } catch (error) {
    process.off("exit", killOnExit);
    await rm(storeDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    kill: () => terminate(child, "SIGKILL"),
    async restart() {
      await terminate(child, "SIGKILL");
      await start();
    },
    async stop() {
      await terminate(child, "SIGTERM");
      process.off("exit", killOnExit);
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
