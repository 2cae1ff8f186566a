import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { parseCatalog } from "@switchyard/catalog";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { testEnv } from "./support/config.js";
import { nameProblems, schemaProblems } from "./support/k8s-schema.js";
import { repoRoot } from "./support/process.js";

type Labels = Record<string, string>;
type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Labels }; spec?: Record<string, unknown>; data?: Record<string, string> };
type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } };
type Container = {
  name: string;
  image: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<Record<string, { name: string; optional?: boolean }>>;
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
  lifecycle?: { preStop?: unknown };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
};
type Workload = Manifest & { spec: { selector: { matchLabels: Labels }; template: { metadata: { labels: Labels }; spec: Record<string, unknown> & { containers: Container[] } } } };
type Peer = { podSelector?: unknown; namespaceSelector?: Record<string, unknown>; ipBlock?: unknown };
type Policy = Manifest & { spec: { podSelector: Record<string, unknown>; policyTypes: string[]; ingress?: Array<{ from?: Peer[] }>; egress?: unknown[] } };

const services = ["router", "identity", "catalog", "inference", "media", "storage", "sandbox"];

/** The keys of switchyard-secrets each service may see (optional ones may be absent), and nothing else. */
const secretKeys: Record<string, { required: string[]; optional: string[] }> = {
  router: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "OTEL_EXPORTER_OTLP_HEADERS"] },
  identity: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL", "SWITCHYARD_ENCRYPTION_KEY"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "SWITCHYARD_BOOTSTRAP_KEY", "OTEL_EXPORTER_OTLP_HEADERS"] },
  catalog: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "OTEL_EXPORTER_OTLP_HEADERS"] },
  inference: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "BROADCAST_WEBHOOK_SECRET", "OTEL_EXPORTER_OTLP_HEADERS"] },
  media: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "OTEL_EXPORTER_OTLP_HEADERS"] },
  storage: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "OTEL_EXPORTER_OTLP_HEADERS"] },
  sandbox: { required: ["SWITCHYARD_INTERNAL_SECRET", "DATABASE_URL"], optional: ["SWITCHYARD_INTERNAL_SECRETS_ACCEPTED", "OTEL_EXPORTER_OTLP_HEADERS"] },
};
/** Provider keys (switchyard-provider-keys) go only where providers are called or listed. */
const providerKeyServices = ["catalog", "inference", "media"];

/** kubectl's kustomize renders an overlay; CI installs kubectl, a laptop without it skips. */
const kubectl = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

/** Every overlay in the tree, so a new one is checked without being named here. */
const overlays = readdirSync(`${repoRoot}deploy/k8s/overlays`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

const render = (overlay: string): Manifest[] =>
  parseAllDocuments(execFileSync("kubectl", ["kustomize", `deploy/k8s/overlays/${overlay}`], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }))
    .map((doc) => doc.toJS() as Manifest)
    .filter(Boolean);

/** CPU quantities in millicores. */
const millicores = (quantity: string) => (quantity.endsWith("m") ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000);
const selects = (selector: Labels, labels: Labels) => Object.entries(selector).every(([k, v]) => labels[k] === v);

describe("the strict manifest check", () => {
  it("rejects a misspelt field at any depth and a name the API server would refuse, which kubernetes-models' validate() lets through", () => {
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "Bad_Name" },
      spec: {
        selector: { matchLabels: { app: "x" } },
        template: { metadata: { labels: { app: "x" } }, spec: { containers: [{ name: "x", image: "x", imagePullPolicyy: "Always" }] } },
      },
    };
    expect(schemaProblems([deployment]).join("\n")).toMatch(/Deployment\/Bad_Name: .*imagePullPolicyy/);
    expect(nameProblems([deployment])).toEqual(["Deployment/Bad_Name: invalid metadata.name"]);
    expect(schemaProblems([{ apiVersion: "v1", kind: "Service", metadata: { name: "ok" }, spec: { port: 80 } } as never])).toHaveLength(1);
  });
});

describe.skipIf(!kubectl && !testEnv.ci).each(overlays)("deploy/k8s/overlays/%s", (overlay) => {
  const objects = kubectl ? render(overlay) : [];
  const namespace = kubectl ? (parse(readFileSync(`${repoRoot}deploy/k8s/overlays/${overlay}/kustomization.yaml`, "utf8")) as { namespace: string }).namespace : "";
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const ofKind = <T extends Manifest>(kind: string) => objects.filter((o) => o.kind === kind) as T[];
  const workloads = () => [...ofKind<Workload>("Deployment"), ...ofKind<Workload>("StatefulSet")];
  const deployment = (service: string) => find("Deployment", `switchyard-${service}`) as Workload;
  const podSpec = (service: string) => deployment(service).spec.template.spec;
  const env = () => objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "switchyard-env")!.data!;

  it("renders objects with only the fields Kubernetes' API types have, valid names, all in the overlay's namespace", () => {
    expect(objects.length).toBeGreaterThan(30);
    expect(schemaProblems(objects)).toEqual([]);
    expect(nameProblems(objects)).toEqual([]);
    expect(namespace).toMatch(/^switchyard/);
    // The namespace is part of the overlay, so `kubectl apply -k` can make it.
    expect(find("Namespace", namespace)).toBeDefined();
    for (const object of objects.filter((o) => o.kind !== "Namespace")) expect(object.metadata.namespace, `${object.kind}/${object.metadata.name}`).toBe(namespace);
  });

  it.each(services)("gives %s a Deployment, Service, HPA, PodDisruptionBudget and ServiceAccount", (service) => {
    expect(deployment(service)).toBeDefined();
    expect(find("Service", service)).toBeDefined();
    expect(find("HorizontalPodAutoscaler", `switchyard-${service}`)).toBeDefined();
    expect(find("PodDisruptionBudget", `switchyard-${service}`)).toBeDefined();
    expect(find("ServiceAccount", `switchyard-${service}`)).toBeDefined();
    expect(podSpec(service).serviceAccountName).toBe(`switchyard-${service}`);
    const spec = podSpec(service);
    const [container] = spec.containers;
    expect(container!.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(container!.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(container!.lifecycle?.preStop).toBeDefined();
    const { requests = {}, limits = {} } = container!.resources ?? {};
    expect(requests.cpu && requests.memory && limits.cpu && limits.memory, JSON.stringify(container!.resources)).toBeTruthy();
    expect(millicores(limits.cpu!)).toBeGreaterThanOrEqual(millicores(requests.cpu!));
    expect(container!.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true });
    // The grace period covers the preStop pause and the whole drain, so no stream is cut short.
    const value = (name: string) => container!.env?.find((e) => e.name === name)?.value;
    const drainMs = Number(value("DRAIN_TIMEOUT_MS"));
    expect(Number(spec.terminationGracePeriodSeconds) * 1000).toBeGreaterThan(drainMs + 10_000);
    // A draining sandbox lets the command it runs finish: its drain outlasts the longest command.
    if (service === "sandbox") expect(drainMs).toBeGreaterThan(Number(value("SANDBOX_COMMAND_TIMEOUT_MS")));
  });

  it.each(services)("gives %s only the secret keys it uses", (service) => {
    const [container] = podSpec(service).containers;
    // Nothing takes the whole Secret.
    expect(container!.envFrom).toEqual([
      { configMapRef: { name: "switchyard-env" } },
      ...(providerKeyServices.includes(service) ? [{ secretRef: { name: "switchyard-provider-keys", optional: true } }] : []),
    ]);
    const refs = (container!.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [{ variable: e.name, ...e.valueFrom.secretKeyRef }] : []));
    for (const ref of refs) expect(ref, "each variable is its key of switchyard-secrets").toMatchObject({ variable: ref.key, name: "switchyard-secrets" });
    const { required, optional } = secretKeys[service]!;
    expect(refs.filter((r) => !r.optional).map((r) => r.key).sort()).toEqual([...required].sort());
    expect(refs.filter((r) => r.optional).map((r) => r.key).sort()).toEqual([...optional].sort());
    expect(new Set(refs.map((r) => r.variable)).size).toBe(refs.length);
  });

  it("documents every secret key in secrets.example.env, and the dev Secret has every required one", () => {
    const example = readFileSync(`${repoRoot}deploy/k8s/secrets.example.env`, "utf8");
    const documented = new Set([...example.matchAll(/^#?\s?([A-Z0-9_]+)=/gm)].map((m) => m[1]!));
    for (const { required, optional } of Object.values(secretKeys)) for (const key of [...required, ...optional]) expect(documented.has(key), key).toBe(true);
    const secret = find("Secret", "switchyard-secrets") as (Manifest & { data: Record<string, string> }) | undefined;
    if (overlay === "dev") {
      for (const { required } of Object.values(secretKeys)) for (const key of required) expect(Object.keys(secret!.data), key).toContain(key);
    } else {
      // Production's Secret is made by the operator, never shipped in the tree.
      expect(secret).toBeUndefined();
    }
  });

  it("selects with each Service, PodDisruptionBudget and HPA a workload that exists, on ports it has", () => {
    for (const service of ofKind<Manifest & { spec: { selector: Labels; ports: Array<{ port: number; targetPort: string | number }> } }>("Service")) {
      const matched = workloads().filter((w) => selects(service.spec.selector, w.spec.template.metadata.labels));
      expect(matched.map((w) => w.metadata.name), `Service/${service.metadata.name}`).toHaveLength(1);
      const ports = matched[0]!.spec.template.spec.containers.flatMap((c) => c.ports ?? []);
      for (const port of service.spec.ports) {
        const target = port.targetPort;
        expect(ports.some((p) => (typeof target === "string" ? p.name === target : p.containerPort === target)), `Service/${service.metadata.name} → ${target}`).toBe(true);
      }
    }
    for (const pdb of ofKind<Manifest & { spec: { selector: { matchLabels: Labels } } }>("PodDisruptionBudget")) {
      const matched = workloads().filter((w) => selects(pdb.spec.selector.matchLabels, w.spec.template.metadata.labels));
      expect(matched.map((w) => w.metadata.name), `PodDisruptionBudget/${pdb.metadata.name}`).toEqual([pdb.metadata.name]);
    }
    for (const hpa of ofKind<Manifest & { spec: { scaleTargetRef: { apiVersion: string; kind: string; name: string } } }>("HorizontalPodAutoscaler")) {
      const target = hpa.spec.scaleTargetRef;
      expect(objects.some((o) => o.kind === target.kind && o.apiVersion === target.apiVersion && o.metadata.name === target.name), `HPA/${hpa.metadata.name}`).toBe(true);
    }
    // Each workload's own selector picks its own pods, and no other workload's.
    for (const workload of workloads()) {
      expect(selects(workload.spec.selector.matchLabels, workload.spec.template.metadata.labels), workload.metadata.name).toBe(true);
      const others = workloads().filter((w) => w !== workload && selects(workload.spec.selector.matchLabels, w.spec.template.metadata.labels));
      expect(others.map((w) => w.metadata.name), workload.metadata.name).toEqual([]);
    }
  });

  it("lets only the router take connections from outside, and sandbox containers reach nothing", () => {
    const policies = ofKind<Policy>("NetworkPolicy");
    const denyAll = policies.find((p) => Object.keys(p.spec.podSelector).length === 0 && !p.spec.ingress);
    expect(denyAll?.spec.policyTypes).toEqual(["Ingress"]);
    // A rule without `from`, or with a peer in any namespace or address, admits the world: only the router's may.
    const openToAll = (rule: { from?: Peer[] }) =>
      !rule.from || rule.from.some((peer) => peer.ipBlock !== undefined || (peer.namespaceSelector !== undefined && Object.keys(peer.namespaceSelector).length === 0));
    const open = policies.filter((p) => p.spec.ingress?.some(openToAll));
    expect(open.map((p) => p.spec.podSelector)).toEqual([{ matchLabels: { "app.kubernetes.io/name": "switchyard", "app.kubernetes.io/component": "router" } }]);
    const sandboxes = policies.find((p) => JSON.stringify(p.spec.podSelector).includes("sandbox-container"))!;
    expect(sandboxes.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(sandboxes.spec.egress).toEqual([]);
  });

  it("keeps secrets out of ConfigMaps and gives the sandbox only the pod permissions it needs", () => {
    expect(Object.keys(env()).filter((k) => /SECRET|KEY|PASSWORD|DATABASE_URL|HEADERS/.test(k) && k !== "SANDBOX_K8S_IMAGE")).toEqual([]);
    const role = find("Role", "switchyard-sandbox") as Manifest & { rules: Array<{ resources: string[]; verbs: string[] }> };
    expect(role.rules).toEqual([{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "create", "delete"] }]);
    expect(podSpec("sandbox").automountServiceAccountToken).toBe(true);
    for (const service of services.filter((s) => s !== "sandbox")) expect(podSpec(service).automountServiceAccountToken, service).toBe(false);
    expect(env().SANDBOX_K8S_IMAGE).toBe(podSpec("sandbox").containers[0]!.image);
  });

  it("points every service at the others through their Services", () => {
    for (const service of services.filter((s) => s !== "router")) {
      const url = new URL(env()[`${service.toUpperCase()}_URL`]!);
      const target = find("Service", url.hostname) as Manifest & { spec: { ports: Array<{ port: number }> } };
      expect(target.spec.ports[0]!.port).toBe(Number(url.port));
    }
  });

  it.runIf(overlay === "dev")("runs NATS with JetStream, Postgres and MinIO in the namespace, reachable by the services", () => {
    for (const name of ["nats", "postgres"]) {
      expect(find("StatefulSet", name), name).toBeDefined();
      expect(find("Service", name), name).toBeDefined();
    }
    expect(find("Deployment", "minio")).toBeDefined();
    expect(new URL(env().NATS_URL!).hostname).toBe("nats");
    const nats = find("StatefulSet", "nats") as Workload;
    expect(nats.spec.template.spec.containers[0]!).toMatchObject({ args: expect.arrayContaining(["-js"]) });
    const secret = find("Secret", "switchyard-secrets") as Manifest & { data: Record<string, string> };
    expect(new URL(Buffer.from(secret.data.DATABASE_URL!, "base64").toString()).hostname).toBe("postgres");
    const dependencies = ofKind<Policy>("NetworkPolicy").find((p) => JSON.stringify(p.spec.podSelector).includes("postgres"));
    expect(dependencies?.spec.ingress).toEqual([{ from: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "switchyard" } } }] }]);
  });

  it.runIf(overlay === "production")("routes the public API through an Ingress to the router's Service", () => {
    const ingress = find("Ingress", "switchyard") as Manifest & { spec: { rules: Array<{ http: { paths: Array<{ path: string; backend: { service: { name: string; port: { name: string } } } }> } }> } };
    expect(ingress).toBeDefined();
    const paths = ingress.spec.rules.flatMap((r) => r.http.paths);
    expect(paths.map((p) => p.path)).toEqual(["/api"]);
    const backend = paths[0]!.backend.service;
    const router = find("Service", backend.name) as Manifest & { spec: { ports: Array<{ name: string }> } };
    expect(router.spec.ports.map((p) => p.name)).toContain(backend.port.name);
    expect(backend.name).toBe("router");
  });
});

describe("deploy/k8s/overlays/production/catalog.yaml", () => {
  it("is a catalog Switchyard accepts", () => {
    const file = `${repoRoot}deploy/k8s/overlays/production/catalog.yaml`;
    expect(parseCatalog(parse(readFileSync(file, "utf8")), file).models.length).toBeGreaterThan(0);
  });
});
