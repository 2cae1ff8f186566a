import { join } from "node:path";
import ts from "typescript";
import { repoRoot } from "./process.js";

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

/** The kubernetes-models module that declares an object's type, e.g. `kubernetes-models/apps/v1/Deployment`. */
const moduleOf = (object: KubernetesObject) => {
  const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : [undefined, object.apiVersion];
  return `kubernetes-models/${group ? `${group}/` : ""}${version}/${object.kind}`;
};

/**
 * Checks objects against Kubernetes' API types, rejecting any field the API does not have. kubernetes-models'
 * own `validate()` lets unknown fields through (its schemas allow additional properties), and a misspelt
 * field is exactly what a manifest gets wrong: the API server drops it silently and the setting is lost.
 * Each object becomes a typed object literal (`const o: IDeployment = {…}`), which TypeScript checks
 * field by field, excess properties included, against the interfaces kubernetes-models generates from
 * Kubernetes' OpenAPI document. Returns one line per problem, naming the object.
 */
export function schemaProblems(objects: readonly KubernetesObject[]): string[] {
  const file = join(repoRoot, "tests", "__k8s-manifests__.ts");
  const lines = [
    ...objects.map((object, i) => `import type { I${object.kind} as T${i} } from "${moduleOf(object)}";`),
    ...objects.map((object, i) => `export const o${i}: T${i} = ${JSON.stringify(object)};`),
  ];
  const source = lines.join("\n");
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    lib: ["lib.es2022.d.ts"],
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => (name === file ? source : readFile(name));
  host.fileExists = (name) => name === file || ts.sys.fileExists(name);
  host.getSourceFile = (name, language, onError, create) => (name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, onError, create));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (diagnostic.file?.fileName !== file || diagnostic.start === undefined) return message;
    const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line;
    const object = objects[line - objects.length] ?? objects[line];
    return `${object ? `${object.kind}/${object.metadata.name}: ` : ""}${message}`;
  });
}

/** RFC 1123 subdomain: most objects' names. */
const subdomain = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** RFC 1123 label: namespaces. RFC 1035 label (a letter first): Services, whose names become DNS names. */
const label1123 = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const label1035 = /^(?=.{1,63}$)[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** Label values: 63 characters at most, alphanumerics at both ends, `-_.` between. */
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Names and labels the API server would refuse. */
export function nameProblems(objects: readonly KubernetesObject[]): string[] {
  const problems: string[] = [];
  for (const object of objects) {
    const { name, namespace, labels } = object.metadata;
    const rule = object.kind === "Service" ? label1035 : object.kind === "Namespace" ? label1123 : subdomain;
    if (!rule.test(name ?? "")) problems.push(`${object.kind}/${name}: invalid metadata.name`);
    if (namespace !== undefined && !label1123.test(namespace)) problems.push(`${object.kind}/${name}: invalid metadata.namespace ${namespace}`);
    for (const [key, value] of Object.entries(labels ?? {})) {
      if (value.length > 63 || !labelValue.test(value)) problems.push(`${object.kind}/${name}: invalid value of label ${key}`);
    }
  }
  return problems;
}
