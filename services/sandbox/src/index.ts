export { startSandbox, type RunningSandbox, type SandboxStartDeps } from "./start.js";
export { sandboxEnv, loadSandboxConfig, type SandboxConfig } from "./config.js";
export type { SandboxRunner, RunLimits, SandboxFile } from "./runners/types.js";
export { createAgentServer } from "./agent/server.js";
