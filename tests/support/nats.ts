import { spawn } from "node:child_process";
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
  /** Stops a server this helper started (never the shared one named by NATS_URL). */
  stop(): Promise<void>;
  /** For outage tests: stops and restarts a server this helper started, keeping its store. */
  restart?(): Promise<void>;
  kill?(): Promise<void>;
}

export const natsServerBinary = "/usr/sbin/nats-server";

const accepting = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });

/** NATS_URL when set; else a private nats-server with JetStream on a free port. */
export async function startTestNats(options: { private?: boolean } = {}): Promise<TestNats> {
  if (testEnv.natsUrl && !options.private) {
    return { url: testEnv.natsUrl, port: Number(new URL(testEnv.natsUrl).port || 4222), stop: async () => {} };
  }
  if (!existsSync(natsServerBinary)) throw new Error(`NATS_URL is not set and ${natsServerBinary} is not installed`);
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), "switchyard-nats-"));
  let child: ReturnType<typeof spawn> | undefined;
  const start = async () => {
    child = spawn(natsServerBinary, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: "ignore" });
    const deadline = Date.now() + 10_000;
    while (!(await accepting(port))) {
      if (Date.now() > deadline) throw new Error("nats-server did not start within 10 s");
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async () => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((r) => running.once("exit", r));
    running.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    kill,
    async restart() {
      await kill();
      await start();
    },
    async stop() {
      await kill();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
