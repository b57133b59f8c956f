// Shared vitest project config: resolve workspace packages to their TypeScript sources
// through the "@holdfast/source" export condition, so tests need no prior build.
import { defaultServerConditions } from "vite";
import { defineProject } from "vitest/config";

// "module" is dropped: packages such as @aws-sdk/* map it to a bundler-only ESM build with
// extensionless imports that Node cannot load; "node"/"import" pick their runnable build.
const conditions = [
  "@holdfast/source",
  ...defaultServerConditions.filter((condition) => condition !== "module"),
];

/** @param {import("vitest/config").UserWorkspaceConfig["test"]} [test] */
export function holdfastProject(test = {}) {
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: conditions } },
    test: { include: ["test/**/*.test.ts"], testTimeout: 20_000, hookTimeout: 60_000, ...test },
  });
}
