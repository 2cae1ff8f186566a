import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testEnv } from "./config.js";

/** What a coding agent's command printed and how it ended. */
export interface AgentRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The path of a coding agent's command as `.ci/run` installs it (AGENTS_DIR); undefined where it is not
 * installed, which fails in CI and skips elsewhere.
 */
export function agentCommand(name: "claude" | "codex"): string | undefined {
  if (testEnv.agentsDir) return join(testEnv.agentsDir, "node_modules", ".bin", name);
  if (testEnv.ci) throw new Error("AGENTS_DIR is not set: .ci/run installs Claude Code and Codex and sets it");
  return undefined;
}

/**
 * Runs an agent's command in a home folder of its own (made by `prepare`, removed after), with only the
 * environment given and PATH, and kills it after `timeoutMs` (within a test's 30 s). Asynchronous: the
 * gateway the agent calls runs in this process.
 */
export async function runAgent(command: string, args: string[], env: Record<string, string>, prepare?: (home: string) => Promise<void>, timeoutMs = 25_000): Promise<AgentRun> {
  const home = await mkdtemp(join(tmpdir(), "switchyard-agent-"));
  try {
    await prepare?.(home);
    return await new Promise<AgentRun>((resolve, reject) => {
      const child = spawn(command, args, { cwd: home, env: { PATH: testEnv.path, HOME: home, ...env }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.on("error", reject);
      child.on("exit", (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
