import { readFileSync } from "node:fs";
import type { SandboxConfig } from "../config.js";
import { bubblewrapRunner } from "./bubblewrap.js";
import { kubernetesRunner } from "./kubernetes.js";
import type { SandboxRunner } from "./types.js";

export type RunnerConfig = Pick<
  SandboxConfig,
  | "SANDBOX_RUNNER"
  | "SANDBOX_DIR"
  | "SANDBOX_UID_BASE"
  | "SANDBOX_MEMORY_BYTES"
  | "SANDBOX_MAX_PROCESSES"
  | "SANDBOX_CPUS"
  | "SANDBOX_CGROUPS"
  | "SANDBOX_DISK_BYTES"
  | "SANDBOX_K8S_API_URL"
  | "SANDBOX_K8S_NAMESPACE"
  | "SANDBOX_K8S_IMAGE"
  | "SANDBOX_K8S_AGENT_PORT"
  | "SANDBOX_K8S_CPU"
  | "SANDBOX_K8S_START_TIMEOUT_MS"
  | "SANDBOX_K8S_TOKEN_FILE"
  | "SANDBOX_K8S_CA_FILE"
  | "KUBERNETES_SERVICE_HOST"
  | "KUBERNETES_SERVICE_PORT"
>;

const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/**
 * `SANDBOX_RUNNER=off`: the service runs, answers health checks, and refuses every command with a 503
 * that says so, as standalone refuses the shell tools when it is off.
 */
export const offRunner = (): SandboxRunner => {
  const refuse = () => Promise.reject(new Error("shell tools are turned off (SANDBOX_RUNNER=off)"));
  return {
    name: "off",
    unavailable: async () => "Shell tools are turned off on this gateway (SANDBOX_RUNNER=off)",
    open: refuse,
    run: refuse,
    files: refuse,
    read: refuse,
    remove: async () => undefined,
  };
};

/** The configured isolation technology; a configuration that cannot work is refused at start. */
export function runnerFor(config: RunnerConfig, secret: string | undefined, instance: string): SandboxRunner {
  if (config.SANDBOX_RUNNER === "off") return offRunner();
  if (config.SANDBOX_RUNNER === "bubblewrap") {
    return bubblewrapRunner({
      dir: config.SANDBOX_DIR,
      instance,
      uidBase: config.SANDBOX_UID_BASE,
      container: { memoryBytes: config.SANDBOX_MEMORY_BYTES, maxProcesses: config.SANDBOX_MAX_PROCESSES, cpus: config.SANDBOX_CPUS, diskBytes: config.SANDBOX_DISK_BYTES },
      cgroups: config.SANDBOX_CGROUPS,
    });
  }
  const apiUrl = config.SANDBOX_K8S_API_URL ?? (config.KUBERNETES_SERVICE_HOST ? `https://${config.KUBERNETES_SERVICE_HOST}:${config.KUBERNETES_SERVICE_PORT}` : undefined);
  if (!apiUrl) throw new Error("SANDBOX_RUNNER=kubernetes needs SANDBOX_K8S_API_URL outside a cluster");
  if (!config.SANDBOX_K8S_IMAGE) throw new Error("SANDBOX_RUNNER=kubernetes needs SANDBOX_K8S_IMAGE, the image of the sandbox pods");
  if (!secret) throw new Error("SANDBOX_RUNNER=kubernetes needs SWITCHYARD_INTERNAL_SECRET, which signs each pod's agent token");
  let namespace = config.SANDBOX_K8S_NAMESPACE;
  if (!namespace) {
    try {
      namespace = readFileSync(namespaceFile, "utf8").trim();
    } catch {
      namespace = "default";
    }
  }
  return kubernetesRunner({
    apiUrl,
    namespace,
    tokenFile: config.SANDBOX_K8S_TOKEN_FILE,
    caFile: apiUrl.startsWith("https:") ? config.SANDBOX_K8S_CA_FILE : undefined,
    image: config.SANDBOX_K8S_IMAGE,
    agentPort: config.SANDBOX_K8S_AGENT_PORT,
    secret,
    memoryBytes: config.SANDBOX_MEMORY_BYTES,
    diskBytes: config.SANDBOX_DISK_BYTES,
    cpu: config.SANDBOX_K8S_CPU,
    uidBase: config.SANDBOX_UID_BASE,
    startTimeoutMs: config.SANDBOX_K8S_START_TIMEOUT_MS,
  });
}
