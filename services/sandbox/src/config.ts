import { tmpdir } from "node:os";
import { join } from "node:path";
import { commonEnv, parseEnv, port } from "@switchyard/runtime";
import { z } from "zod";

export const sandboxEnv = z.object({
  ...commonEnv,
  /** Port of the sandbox service when it runs as its own process. */
  PORT: port(8086),
  /** Base URL of the storage service (container files are reported there) when the sandbox runs as its own process. */
  STORAGE_URL: z.url().default("http://127.0.0.1:8085"),
  /**
   * What isolates commands: `bubblewrap` (Linux namespaces on this machine, `bwrap` from Debian's bubblewrap
   * package), `kubernetes` (a pod per container), or `off` (shell tools are refused).
   */
  SANDBOX_RUNNER: z.enum(["bubblewrap", "kubernetes", "off"]).default("bubblewrap"),
  /** Where containers' private file trees live; every path up to it must be traversable by other users. */
  SANDBOX_DIR: z.string().default(join(tmpdir(), "switchyard-sandboxes")),
  /** First user id given to containers when the service runs as root; each container gets its own. */
  SANDBOX_UID_BASE: z.coerce.number().int().min(1000).default(200_000),
  /** Longest wall time of one command; a request may ask for less. */
  SANDBOX_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /**
   * Memory of each container, in bytes: all its processes together, and (as root) the files of its home,
   * which live in memory. Also the address space of each process, which is all a non-root service can cap.
   */
  SANDBOX_MEMORY_BYTES: z.coerce.number().int().min(16 * 1024 * 1024).default(1024 * 1024 * 1024),
  /** Processes and threads a container may have at once (fork bombs end here). */
  SANDBOX_MAX_PROCESSES: z.coerce.number().int().min(4).default(128),
  /** CPUs' worth of time a container may use at once (its cgroup's CPU quota); 0.5 is half of one CPU. */
  SANDBOX_CPUS: z.coerce.number().min(0.01).max(1024).default(1),
  /**
   * `auto` puts each container in a cgroup of its own (memory, processes, CPU) when this machine lets the
   * service make one (cgroup v2, or v1 controllers, writable: as root); `off` keeps per-process limits only.
   */
  SANDBOX_CGROUPS: z.enum(["auto", "off"]).default("auto"),
  /** Live containers one workspace may have at once; a call that would start one more is refused. */
  SANDBOX_MAX_CONTAINERS: z.coerce.number().int().min(1).default(20),
  /** Output kept of each stream (stdout, stderr) of one command, in bytes; the rest is dropped and marked. */
  SANDBOX_OUTPUT_BYTES: z.coerce.number().int().min(1024).default(64 * 1024),
  /** Largest file a command may write, in bytes. */
  SANDBOX_FILE_BYTES: z.coerce.number().int().min(1024).default(64 * 1024 * 1024),
  /**
   * Total bytes of a container's files. As root the home is a tmpfs of this size (writes past it fail with
   * ENOSPC); otherwise the tree is measured before each command, and a container over it cannot grow.
   */
  SANDBOX_DISK_BYTES: z.coerce.number().int().min(1024).default(512 * 1024 * 1024),
  /** Default time a container stays warm after its last command before it is removed. */
  SANDBOX_IDLE_MS: z.coerce.number().int().min(1000).default(900_000),
  /** Longest idle time a request may ask for. */
  SANDBOX_MAX_IDLE_MS: z.coerce.number().int().min(1000).default(86_400_000),
  /** Kubernetes API server; defaults to the in-cluster address (KUBERNETES_SERVICE_HOST and _PORT). */
  SANDBOX_K8S_API_URL: z.url().optional(),
  /** Set by Kubernetes in every pod: where the API server is. */
  KUBERNETES_SERVICE_HOST: z.string().optional(),
  KUBERNETES_SERVICE_PORT: z.string().default("443"),
  /** Namespace of the sandbox pods; defaults to the service account's own. */
  SANDBOX_K8S_NAMESPACE: z.string().optional(),
  /** Image of the sandbox pods: the Switchyard image, which holds the sandbox agent. */
  SANDBOX_K8S_IMAGE: z.string().optional(),
  /** Port of the agent in each sandbox pod. */
  SANDBOX_K8S_AGENT_PORT: port(8087),
  /** CPU limit of each sandbox pod, in Kubernetes quantity notation. */
  SANDBOX_K8S_CPU: z.string().default("1"),
  /** How long a new sandbox pod may take to run. */
  SANDBOX_K8S_START_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  /** Service account token and CA of the API server, as Kubernetes mounts them in a pod. */
  SANDBOX_K8S_TOKEN_FILE: z.string().default("/var/run/secrets/kubernetes.io/serviceaccount/token"),
  SANDBOX_K8S_CA_FILE: z.string().default("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"),
  /** Largest file whose content is copied to storage with its metadata. */
  SANDBOX_SYNC_FILE_BYTES: z.coerce.number().int().min(0).default(8 * 1024 * 1024),
});
export type SandboxConfig = z.infer<typeof sandboxEnv>;

export const loadSandboxConfig = (env: Record<string, string | undefined> = process.env): SandboxConfig => parseEnv(sandboxEnv, env);

/** What the agent in a sandbox pod reads; the sandbox service sets it in the pod's spec. */
export const agentEnv = z.object({
  /** The pod's own token (an HMAC of its name): the agent answers no one else. */
  SANDBOX_AGENT_TOKEN: z.string().min(32, "must be at least 32 characters"),
  PORT: port(8087),
  /** The container's file tree. */
  SANDBOX_HOME: z.string().default("/home/sandbox"),
});

export const loadAgentConfig = (env: Record<string, string | undefined> = process.env) => parseEnv(agentEnv, env);
