// Bundles the console into dist/ (or the folder given as the first argument): index.html, app.js and
// app.css, nothing loaded from elsewhere.
import { build } from "esbuild";
import { copyFile, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dist = process.argv[2] ? pathToFileURL(`${process.argv[2].replace(/\/$/, "")}/`) : new URL("./dist/", import.meta.url);
await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
await build({
  entryPoints: { app: "src/main.tsx" },
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: dist.pathname,
  legalComments: "linked",
  logLevel: "warning",
});
await copyFile(new URL("./src/index.html", import.meta.url), new URL("index.html", dist));
// The bundled libraries' licenses travel with the bundle.
const require = createRequire(import.meta.url);
const licenses = await Promise.all(
  ["preact", "uplot"].map(async (name) => {
    const file = require.resolve.paths(name).map((dir) => join(dir, name, "LICENSE")).find((path) => existsSync(path));
    return `${name}\n\n${await readFile(file, "utf8")}`;
  }),
);
await writeFile(new URL("licenses.txt", dist), licenses.join("\n\n"));
let total = 0;
for (const name of ["index.html", "app.js", "app.css"]) total += (await stat(new URL(name, dist))).size;
console.log(`console built: ${Math.round(total / 1024)} KB`);
