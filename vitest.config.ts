import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { SummaryReporter } from "./tests/support/summary-reporter.js";

const lib = (name: string) => fileURLToPath(new URL(`./libs/${name}/src/index.ts`, import.meta.url));
const service = (name: string) => fileURLToPath(new URL(`./services/${name}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources; processes spawned by tests run the built dist.
    alias: {
      "@switchyard/contracts": lib("contracts"),
      "@switchyard/runtime": lib("runtime"),
      "@switchyard/upstream": lib("upstream"),
      "@switchyard/identity": service("identity"),
      "@switchyard/router": service("router"),
      "@switchyard/catalog": service("catalog"),
      "@switchyard/inference": service("inference"),
      "@switchyard/media": service("media"),
      "@switchyard/storage": service("storage"),
      "@switchyard/standalone": service("standalone"),
    },
  },
  test: {
    include: ["libs/*/src/**/*.test.ts", "services/*/src/**/*.test.ts", "apps/console/src/**/*.test.ts", "bench/src/**/*.test.ts", "tests/**/*.test.ts"],
    // Two cores: keep parallelism modest; each test owns its database, stream and bucket names.
    maxWorkers: 2,
    // Backends the environment does not name come from containers where a Docker engine answers.
    globalSetup: ["./tests/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", new SummaryReporter()],
  },
});
