import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentServer } from "@switchyard/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startFakeAgent, toolResults, type FakeAgent } from "./support/fake-agent.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { freePort } from "./support/process.js";

type PodSpec = {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: Record<string, unknown> & { containers: Array<Record<string, unknown> & { env: Array<{ name: string; value: string }> }> };
};

/**
 * A Kubernetes API server on 127.0.0.1 that runs each pod it is asked for as a sandbox agent in this
 * process, on its own loopback address (127.0.0.2, .3, …) and the agent port, and reports it Running.
 */
async function startFakeKubernetes(agentPort: number, token: string) {
  const pods = new Map<string, { spec: PodSpec; ip: string; phase: string; agent: Server; home: string }>();
  const created: PodSpec[] = [];
  const deleted: string[] = [];
  let next = 2;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${token}`) return reply(401, { kind: "Status", code: 401 });
    const url = new URL(req.url ?? "/", "http://k8s");
    const match = /^\/api\/v1\/namespaces\/sandboxes\/pods(?:\/([^/]+))?$/.exec(url.pathname);
    if (!match) return reply(404, { kind: "Status", code: 404 });
    const name = match[1];
    const view = (pod: { spec: PodSpec; ip: string; phase: string }) => ({ ...pod.spec, status: { phase: pod.phase, podIP: pod.ip } });
    if (req.method === "GET" && !name) return reply(200, { kind: "PodList", items: [...pods.values()].map(view) });
    if (req.method === "GET") return pods.has(name!) ? reply(200, view(pods.get(name!)!)) : reply(404, { kind: "Status", code: 404 });
    if (req.method === "POST") {
      const spec = JSON.parse(Buffer.concat(chunks).toString("utf8")) as PodSpec;
      created.push(spec);
      const env = Object.fromEntries(spec.spec.containers[0]!.env.map((e) => [e.name, e.value]));
      const home = await mkdtemp(join(tmpdir(), "sy-pod-"));
      const agent = createAgentServer(home, env.SANDBOX_AGENT_TOKEN!);
      const ip = `127.0.0.${next++}`;
      const pod = { spec, ip, phase: "Pending", agent, home };
      pods.set(spec.metadata.name, pod);
      agent.listen(agentPort, ip, () => setTimeout(() => (pod.phase = "Running"), 200));
      return reply(201, view(pod));
    }
    if (req.method === "DELETE" && pods.has(name!)) {
      const pod = pods.get(name!)!;
      pods.delete(name!);
      deleted.push(name!);
      pod.agent.closeAllConnections();
      pod.agent.close();
      await rm(pod.home, { recursive: true, force: true });
      return reply(200, view(pod));
    }
    return reply(404, { kind: "Status", code: 404 });
  });
  const listening = await listenLocal(server);
  return {
    url: listening.baseUrl.replace(/\/v1$/, ""),
    pods,
    created,
    deleted,
    async stop() {
      for (const pod of pods.values()) {
        pod.agent.closeAllConnections();
        pod.agent.close();
        await rm(pod.home, { recursive: true, force: true });
      }
      await listening.stop();
    },
  };
}

let gw: TestGateway;
let model: FakeAgent;
let kube: Awaited<ReturnType<typeof startFakeKubernetes>>;
let dir: string;
let key: string;
let agentPort: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sy-k8s-"));
  await writeFile(join(dir, "token"), "service-account-token\n");
  agentPort = await freePort();
  kube = await startFakeKubernetes(agentPort, "service-account-token");
  model = await startFakeAgent({
    "from-user": (body) =>
      body.messages.some((m) => m.role === "tool")
        ? { content: JSON.stringify(toolResults(body.messages)) }
        : { calls: [{ name: "shell", arguments: { commands: JSON.parse(String(body.messages.at(-1)!.content)) as string[] } }] },
  });
  const catalog = {
    providers: [{ slug: "scripted", name: "Scripted", adapter: "openai-compatible", base_url: model.baseUrl, requires_api_key: false }],
    models: [{ id: "agent/shell", name: "Shell", context_length: 8000, endpoints: [{ provider: "scripted", upstream_model: "from-user", pricing: { prompt: "0", completion: "0" }, supported_parameters: ["tools"] }] }],
  };
  gw = await startTestGateway({
    ...(await catalogEnv(catalog)),
    SWITCHYARD_INTERNAL_SECRET: "k8s-test-internal-secret-0123456789abcdef",
    SANDBOX_RUNNER: "kubernetes",
    SANDBOX_K8S_API_URL: kube.url,
    SANDBOX_K8S_NAMESPACE: "sandboxes",
    SANDBOX_K8S_IMAGE: "registry.example/switchyard:test",
    SANDBOX_K8S_TOKEN_FILE: join(dir, "token"),
    SANDBOX_K8S_AGENT_PORT: String(agentPort),
    SANDBOX_IDLE_MS: "1500",
  });
  key = String((await gw.call("POST", "/keys", { body: { name: "k8s" } })).body.key);
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await model?.stop();
  await kube?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const shell = async (commands: string[]) => {
  const res = await gw.call("POST", "/chat/completions", {
    key,
    body: { model: "agent/shell", session_id: "pod-session", messages: [{ role: "user", content: JSON.stringify(commands) }], tools: [{ type: "openrouter:shell" }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const content = (res.body.choices as Array<{ message: { content: string } }>)[0]!.message.content;
  return (JSON.parse(content) as Array<{ container_id: string; results: Array<{ stdout: string; exit_code: number }> }>)[0]!;
};

describe("sandbox pods on Kubernetes", () => {
  it("runs a session's commands in a hardened pod of its own and lists the files they wrote", async () => {
    const result = await shell(["mkdir -p out && printf pod > out/where.txt && cat out/where.txt"]);
    expect(result).toMatchObject({ container_id: "sess_pod-session", results: [{ stdout: "pod", exit_code: 0 }] });
    expect(kube.created).toHaveLength(1);
    const pod = kube.created[0]!;
    expect(pod.metadata.labels["app.kubernetes.io/component"]).toBe("sandbox-container");
    expect(pod.metadata.annotations["switchyard.dev/container-id"]).toBe("sess_pod-session");
    expect(pod.spec).toMatchObject({
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: "Never",
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    });
    expect(pod.spec.containers[0]).toMatchObject({
      image: "registry.example/switchyard:test",
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
      resources: { limits: { memory: String(1024 * 1024 * 1024), cpu: "1" } },
    });
    const listed = await gw.call("GET", "/containers/sess_pod-session/files", { key });
    expect((listed.body.data as unknown as Array<{ path: string; bytes: number }>).map((f) => [f.path, f.bytes])).toEqual([["out/where.txt", 3]]);
  });

  it("reuses the session's pod, and its agent answers no one without the pod's token", async () => {
    expect(await shell(["cat out/where.txt"])).toMatchObject({ results: [{ stdout: "pod" }] });
    expect(kube.created).toHaveLength(1);
    const pod = [...kube.pods.values()][0]!;
    const anonymous = await fetch(`http://${pod.ip}:${agentPort}/run`, { method: "POST", body: JSON.stringify({ command: "id" }) });
    expect(anonymous.status).toBe(401);
  });

  it("deletes an idle container's pod, and the session's next command starts a new -r container", async () => {
    await eventually(async () => kube.deleted.length === 1, 10_000);
    expect(kube.pods.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the reaper marks the container ended right after
    const revived = await shell(["ls"]);
    expect(revived.container_id).toMatch(/^sess_pod-session-r[A-Za-z0-9]{6}$/);
    expect(revived.results[0]!.stdout).toBe("");
    expect(kube.created).toHaveLength(2);
  });
});
