import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { ConfigError } from "@switchyard/runtime";
import { parse as parseYaml } from "yaml";
import { catalogConfig, type CatalogConfig } from "./schema.js";

/** Validates a catalog document; every problem is reported with the path of the offending value. */
export function parseCatalog(document: unknown, source: string): CatalogConfig {
  const result = catalogConfig.safeParse(document);
  if (result.success) return result.data;
  const lines = result.error.issues.slice(0, 20).map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  throw new ConfigError(`Invalid catalog in ${source}:\n${lines.join("\n")}`);
}

/** Shipped beside the package (`services/catalog/default-catalog.yaml`); also the example of the format. */
export const defaultCatalogPath = fileURLToPath(new URL("../../default-catalog.yaml", import.meta.url));

/** The operator's file when one is named (YAML or JSON by content), else the shipped default catalog. */
export async function loadCatalog(path: string | undefined): Promise<CatalogConfig> {
  path ??= defaultCatalogPath;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`SWITCHYARD_CONFIG: cannot read ${path}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    // YAML is a superset of JSON, so one parser reads both.
    document = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`SWITCHYARD_CONFIG: ${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  return parseCatalog(document, path);
}
