import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "./process.js";

/**
 * The public routes the services register, read from their sources as `<method> <path>` with the path
 * relative to `/api/v1` and its parameters as `{name}`: every `app.<method>("/api/v1…"` (catalog spells
 * the prefix `v1("…")`), and inference's generation routes, which it keeps in a map of path to handler
 * (all POST) for its plain fast path.
 */
export async function servedRoutes(): Promise<string[]> {
  const routes: string[] = [];
  const add = (method: string, path: string) => routes.push(`${method} ${path.replace(/^\/api\/v1/, "").replace(/:(\w+)/g, "{$1}")}`);
  const services = join(repoRoot, "services");
  for (const service of await readdir(services)) {
    const files = await readdir(join(services, service, "src"), { recursive: true }).catch(() => []);
    for (const file of files.filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"))) {
      const source = await readFile(join(services, service, "src", file), "utf8");
      for (const [, method, path, relative] of source.matchAll(/\bapp\.(get|post|put|patch|delete)\(\s*(?:"(\/api\/v1[^"]*)"|v1\("([^"]*)"\))/g)) {
        add(method!, path ?? `/api/v1${relative}`);
      }
      for (const [, path] of source.matchAll(/\[\s*"(\/api\/v1[^"]*)",\s*\w+Route\(/g)) add("post", path!);
    }
  }
  return routes.sort();
}
