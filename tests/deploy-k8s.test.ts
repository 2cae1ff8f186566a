import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseCatalog } from "@switchyard/catalog";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { testEnv } from "./support/config.js";
import { repoRoot } from "./support/process.js";

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; spec?: Record<string, unknown>; data?: Record<string, string> };
type Container = {
  name: string;
  image: string;
  env?: Array<{ name: string; value?: string }>;
  envFrom?: Array<Record<string, { name: string }>>;
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
  lifecycle?: { preStop?: unknown };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
};

const services = ["router", "identity", "catalog", "inference", "media", "storage", "sandbox"];

/** kubectl's kustomize renders an overlay; CI installs kubectl, a laptop without it skips. */
const kubectl = (() => {
  try {
    execFileSync("kubectl", ["version", "--client"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const render = (overlay: string): Manifest[] =>
  parseAllDocuments(execFileSync("kubectl", ["kustomize", `deploy/k8s/overlays/${overlay}`], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }))
    .map((doc) => doc.toJS() as Manifest)
    .filter(Boolean);

/** The kubernetes-models class of an object (its JSON schema, from Kubernetes' OpenAPI document). */
async function modelOf(apiVersion: string, kind: string) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : [undefined, apiVersion];
  const module = (await import(`kubernetes-models/${group ? `${group}/` : ""}${version}/${kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  return module[kind]!;
}

describe.skipIf(!kubectl && !testEnv.ci).each(["dev", "production"])("deploy/k8s/overlays/%s", (overlay) => {
  const objects = kubectl ? render(overlay) : [];
  const find = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
  const deployment = (service: string) => find("Deployment", `switchyard-${service}`)!;
  const podSpec = (service: string) => (deployment(service).spec as { template: { spec: Record<string, unknown> & { containers: Container[] } } }).template.spec;

  it("renders objects that Kubernetes' schemas accept, all in the overlay's namespace", async () => {
    expect(objects.length).toBeGreaterThan(30);
    for (const object of objects) {
      const Model = await modelOf(object.apiVersion, object.kind);
      expect(() => new Model(object).validate(), `${object.kind}/${object.metadata.name}`).not.toThrow();
      if (object.kind !== "Namespace") expect(object.metadata.namespace, `${object.kind}/${object.metadata.name}`).toBe(overlay === "dev" ? "switchyard-dev" : "switchyard");
    }
  });

  it.each(services)("gives %s a Deployment, Service, HPA, PodDisruptionBudget and ServiceAccount", (service) => {
    expect(deployment(service)).toBeDefined();
    expect(find("Service", service)).toBeDefined();
    expect(find("HorizontalPodAutoscaler", `switchyard-${service}`)).toBeDefined();
    expect(find("PodDisruptionBudget", `switchyard-${service}`)).toBeDefined();
    expect(find("ServiceAccount", `switchyard-${service}`)).toBeDefined();
    const spec = podSpec(service);
    const [container] = spec.containers;
    expect(container!.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(container!.livenessProbe?.httpGet?.path).toBe("/healthz");
    expect(container!.lifecycle?.preStop).toBeDefined();
    expect(container!.resources?.requests?.cpu && container!.resources.requests.memory && container!.resources.limits?.memory).toBeTruthy();
    expect(container!.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true });
    // The grace period covers the preStop pause and the whole drain, so no stream is cut short.
    const drainMs = Number(container!.env?.find((e) => e.name === "DRAIN_TIMEOUT_MS")?.value);
    expect(Number(spec.terminationGracePeriodSeconds) * 1000).toBeGreaterThan(drainMs + 10_000);
    expect(container!.envFrom).toEqual(expect.arrayContaining([{ configMapRef: { name: "switchyard-env" } }, { secretRef: { name: "switchyard-secrets" } }]));
  });

  it("lets only the router take connections from outside, and sandbox containers reach nothing", () => {
    const policies = objects.filter((o) => o.kind === "NetworkPolicy") as Array<Manifest & { spec: { podSelector: Record<string, unknown>; policyTypes: string[]; ingress?: Array<{ from?: unknown[] }>; egress?: unknown[] } }>;
    const denyAll = policies.find((p) => Object.keys(p.spec.podSelector).length === 0 && !p.spec.ingress);
    expect(denyAll?.spec.policyTypes).toEqual(["Ingress"]);
    // A rule without `from` admits every source: only the router's may.
    const open = policies.filter((p) => p.spec.ingress?.some((rule) => !rule.from));
    expect(open.map((p) => p.spec.podSelector)).toEqual([{ matchLabels: { "app.kubernetes.io/name": "switchyard", "app.kubernetes.io/component": "router" } }]);
    const sandboxes = policies.find((p) => JSON.stringify(p.spec.podSelector).includes("sandbox-container"))!;
    expect(sandboxes.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect(sandboxes.spec.egress).toEqual([]);
  });

  it("keeps secrets out of ConfigMaps and gives the sandbox only the pod permissions it needs", () => {
    const env = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "switchyard-env")!;
    expect(Object.keys(env.data!).filter((k) => /SECRET|KEY|PASSWORD|DATABASE_URL/.test(k) && k !== "SANDBOX_K8S_IMAGE")).toEqual([]);
    const role = find("Role", "switchyard-sandbox") as Manifest & { rules: Array<{ resources: string[]; verbs: string[] }> };
    expect(role.rules).toEqual([{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "create", "delete"] }]);
    expect(podSpec("sandbox").automountServiceAccountToken).toBe(true);
    expect(podSpec("inference").automountServiceAccountToken).toBe(false);
    expect(env.data!.SANDBOX_K8S_IMAGE).toBe(podSpec("sandbox").containers[0]!.image);
  });

  it("points every service at the others through their Services", () => {
    const env = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "switchyard-env")!.data!;
    for (const service of services.filter((s) => s !== "router")) {
      const url = new URL(env[`${service.toUpperCase()}_URL`]!);
      const target = find("Service", url.hostname) as Manifest & { spec: { ports: Array<{ port: number }> } };
      expect(target.spec.ports[0]!.port).toBe(Number(url.port));
    }
  });
});

describe("deploy/k8s/overlays/production/catalog.yaml", () => {
  it("is a catalog Switchyard accepts", () => {
    const file = `${repoRoot}deploy/k8s/overlays/production/catalog.yaml`;
    expect(parseCatalog(parse(readFileSync(file, "utf8")), file).models.length).toBeGreaterThan(0);
  });
});
