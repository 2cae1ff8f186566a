import { createHash, createHmac } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { CommandResult } from "@switchyard/contracts";
import { Agent, request } from "undici";
import type { ContainerSlot, RunLimits, SandboxFile, SandboxRunner } from "./types.js";

export interface KubernetesOptions {
  /** The API server, e.g. https://kubernetes.default.svc. */
  apiUrl: string;
  namespace: string;
  /** The service account token file (read again on every call: kubelet rotates it). */
  tokenFile: string;
  /** The API server's CA bundle; unset for plain http (tests) or a CA the system trusts. */
  caFile?: string | undefined;
  /** The Switchyard image, which holds the sandbox agent. */
  image: string;
  agentPort: number;
  /** Signs each pod's agent token, so a token read from one pod opens no other. */
  secret: string;
  /** Resource limits of each pod. */
  memoryBytes: number;
  diskBytes: number;
  cpu: string;
  uidBase: number;
  startTimeoutMs: number;
}

interface Pod {
  metadata: { name: string; annotations?: Record<string, string> };
  status?: { phase?: string; podIP?: string };
}

const home = "/home/sandbox";

/**
 * One pod per container, made through the Kubernetes API: the pod runs the sandbox agent of the Switchyard
 * image as its own non-root user, with no service account token, no privilege escalation, no capabilities,
 * a read-only root, size-limited home and /tmp, and resource limits. Its network is cut by the
 * `switchyard-sandbox-containers` NetworkPolicy that selects `app.kubernetes.io/component: sandbox-container`
 * (deploy/k8s/base/network-policies.yaml).
 * Commands and files go to the agent over HTTP with the pod's own token.
 */
export function kubernetesRunner(options: KubernetesOptions): SandboxRunner {
  // The API server's connections trust its CA; the agents' (plain HTTP inside the cluster) need none.
  let apiDispatcher: Promise<Agent> | undefined;
  const apiAgent = () => (apiDispatcher ??= options.caFile ? readFile(options.caFile).then((ca) => new Agent({ connect: { ca } })) : Promise.resolve(new Agent()));
  const dispatcher = new Agent();
  const base = `${options.apiUrl.replace(/\/$/, "")}/api/v1/namespaces/${encodeURIComponent(options.namespace)}/pods`;
  const hash = (id: string) => createHash("sha256").update(id).digest("hex").slice(0, 20);
  const podName = (id: string) => `switchyard-sandbox-${hash(id)}`;
  const tokenOf = (name: string) => createHmac("sha256", options.secret).update(name).digest("hex");
  const agents = new Map<string, string>();

  const api = async (method: string, url: string, body?: unknown) => {
    const token = (await readFile(options.tokenFile, "utf8")).trim();
    const res = await request(url, {
      method: method as "GET",
      dispatcher: await apiAgent(),
      headers: { authorization: `Bearer ${token}`, accept: "application/json", ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: text ? (JSON.parse(text) as unknown) : undefined };
  };

  const podSpec = (slot: ContainerSlot, name: string) => {
    const id = slot.id;
    // Pods share the node's user namespace: a user of its own keeps each pod's process limit its own.
    const uid = options.uidBase + slot.uidSlot;
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        labels: { "app.kubernetes.io/name": "switchyard", "app.kubernetes.io/component": "sandbox-container", "switchyard.dev/container": hash(id) },
        annotations: { "switchyard.dev/container-id": id },
      },
      spec: {
        restartPolicy: "Never",
        automountServiceAccountToken: false,
        enableServiceLinks: false,
        securityContext: { runAsNonRoot: true, runAsUser: uid, runAsGroup: uid, fsGroup: uid, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "sandbox",
            image: options.image,
            command: ["node", "services/sandbox/dist/agent/main.js"],
            env: [
              { name: "SANDBOX_AGENT_TOKEN", value: tokenOf(name) },
              { name: "SANDBOX_HOME", value: home },
              { name: "PORT", value: String(options.agentPort) },
            ],
            ports: [{ name: "agent", containerPort: options.agentPort }],
            readinessProbe: { httpGet: { path: "/healthz", port: options.agentPort }, periodSeconds: 1 },
            resources: {
              requests: { cpu: "50m", memory: "64Mi" },
              limits: { cpu: options.cpu, memory: String(options.memoryBytes), "ephemeral-storage": String(options.diskBytes + 64 * 1024 * 1024) },
            },
            securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
            volumeMounts: [
              { name: "home", mountPath: home },
              { name: "tmp", mountPath: "/tmp" },
            ],
          },
        ],
        volumes: [
          { name: "home", emptyDir: { sizeLimit: String(options.diskBytes) } },
          { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
        ],
      },
    };
  };

  /** The agent's base URL once the pod runs; a pod that ended is replaced when the container's slot is known. */
  const agentOf = async (id: string, slot?: ContainerSlot): Promise<string> => {
    const known = agents.get(id);
    if (known) return known;
    const name = podName(id);
    const deadline = Date.now() + options.startTimeoutMs;
    for (;;) {
      const { status, json } = await api("GET", `${base}/${name}`);
      const pod = json as Pod | undefined;
      if (status === 404) {
        if (!slot) throw new Error(`the sandbox pod ${name} is gone`);
        const created = await api("POST", base, podSpec(slot, name));
        if (created.status !== 201 && created.status !== 409) throw new Error(`the Kubernetes API refused the sandbox pod ${name}: ${created.status}`);
      } else if (status !== 200) {
        throw new Error(`the Kubernetes API answered ${status} for pod ${name}`);
      } else if (pod?.status?.phase === "Failed" || pod?.status?.phase === "Succeeded") {
        await api("DELETE", `${base}/${name}?gracePeriodSeconds=0`);
      } else if (pod?.status?.phase === "Running" && pod.status.podIP) {
        const url = `http://${pod.status.podIP.includes(":") ? `[${pod.status.podIP}]` : pod.status.podIP}:${options.agentPort}`;
        const ready = await request(`${url}/healthz`, { dispatcher }).then((r) => (r.body.dump(), r.statusCode === 200)).catch(() => false);
        if (ready) {
          agents.set(id, url);
          return url;
        }
      }
      if (Date.now() > deadline) throw new Error(`the sandbox pod ${name} did not start within ${options.startTimeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  const agentCall = async (id: string, method: "GET" | "POST", path: string, options: { body?: unknown; timeoutMs?: number; slot?: ContainerSlot; signal?: AbortSignal | undefined } = {}) => {
    const { body, timeoutMs = 30_000, slot, signal } = options;
    const url = await agentOf(id, slot);
    try {
      const res = await request(`${url}${path}`, {
        method,
        dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        headers: { authorization: `Bearer ${tokenOf(podName(id))}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
      return res;
    } catch (error) {
      if (signal?.aborted) throw error;
      agents.delete(id); // the pod may be gone: look it up again next time
      throw error;
    }
  };

  return {
    name: "kubernetes",
    async unavailable() {
      try {
        const { status } = await api("GET", `${base}?limit=1`);
        if (status === 200) return undefined;
        return `the Kubernetes API answered ${status} when listing pods in ${options.namespace}; the sandbox's service account needs get, list, create and delete on pods there`;
      } catch (error) {
        return `the Kubernetes API at ${options.apiUrl} cannot be reached: ${(error as Error).message}`;
      }
    },
    async open(slot) {
      await agentOf(slot.id, slot);
    },
    async run(slot, command, limits: RunLimits, signal): Promise<CommandResult> {
      let res;
      try {
        // Closing the request tells the agent to kill the command.
        res = await agentCall(slot.id, "POST", "/run", { body: { command, limits }, timeoutMs: limits.timeoutMs + 15_000, slot, signal });
      } catch (error) {
        if (!signal?.aborted) throw error;
        return { command, stdout: "", stderr: "", exit_code: null, timed_out: false, truncated: false, error: "Command cancelled: the request that ran it was abandoned" };
      }
      const answer = (await res.body.json()) as CommandResult & { error?: unknown };
      if (res.statusCode !== 200) throw new Error(`the sandbox agent answered ${res.statusCode}`);
      return answer;
    },
    async files(id, max): Promise<SandboxFile[]> {
      const res = await agentCall(id, "GET", `/files?max=${max}`);
      const answer = (await res.body.json()) as { files: Array<{ path: string; bytes: number; modified_at: string }> };
      return answer.files.map((f) => ({ path: f.path, bytes: f.bytes, modifiedAt: new Date(f.modified_at) }));
    },
    async read(id, path) {
      const res = await agentCall(id, "GET", `/file?path=${encodeURIComponent(path)}`);
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`${path}: the sandbox agent answered ${res.statusCode}`);
      }
      return Buffer.from(await res.body.arrayBuffer());
    },
    async remove(id) {
      agents.delete(id);
      const { status } = await api("DELETE", `${base}/${podName(id)}?gracePeriodSeconds=0`);
      if (status !== 200 && status !== 202 && status !== 404) throw new Error(`the Kubernetes API answered ${status} deleting pod ${podName(id)}`);
    },
  };
}
