// Builds the npm package into dist/: the `switchyard` command bundled with the workspace's libraries and
// services (switchyard.js), the console's built files (console/) and the default catalog. Packages from
// npm stay imports, installed from this package's dependencies; the build fails when the bundle needs
// one that is not listed, or lists one it does not import.
import { build } from "esbuild";
import { cp, mkdir, readFile, rm, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dist = new URL("./dist/", import.meta.url);
const pkg = JSON.parse(await readFile(new URL("./package.json", import.meta.url), "utf8"));
const dependencies = Object.keys(pkg.dependencies);
await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
const result = await build({
  entryPoints: { switchyard: "src/cli.ts" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outdir: fileURLToPath(dist),
  external: dependencies,
  banner: { js: "#!/usr/bin/env node" },
  metafile: true,
  logLevel: "warning",
});

// The workspace's packages resolve to their own folders; an input under node_modules is a package from
// npm that was bundled because it is missing from the dependencies.
const strays = Object.keys(result.metafile.inputs).filter((path) => path.includes("node_modules/"));
if (strays.length) throw new Error(`add these packages to package.json's dependencies instead of bundling them:\n  ${strays.join("\n  ")}`);
const packageOf = (path) => path.split("/").slice(0, path.startsWith("@") ? 2 : 1).join("/");
const imported = new Set(
  Object.values(result.metafile.outputs).flatMap((output) => output.imports.filter((i) => i.external && !i.path.startsWith("node:")).map((i) => packageOf(i.path))),
);
const unused = dependencies.filter((name) => !imported.has(name));
if (unused.length) throw new Error(`package.json lists dependencies the bundle does not import: ${unused.join(", ")}`);

const require = createRequire(import.meta.url);
const consoleDist = join(dirname(require.resolve("@switchyard/console/package.json")), "dist");
await cp(consoleDist, fileURLToPath(new URL("console/", dist)), { recursive: true });
await cp(new URL("../../services/catalog/default-catalog.yaml", import.meta.url), new URL("default-catalog.yaml", dist));
const size = (await stat(new URL("switchyard.js", dist))).size;
console.log(`gateway package built: switchyard.js ${Math.round(size / 1024)} KB, ${imported.size} dependencies`);
