// Shared vitest project config: resolve workspace packages to their TypeScript sources
// through the "@holdfast/source" export condition, so tests need no prior build.
import { defaultServerConditions } from "vite";
import { defineProject } from "vitest/config";

const conditions = ["@holdfast/source", ...defaultServerConditions];

/** @param {import("vitest/config").UserWorkspaceConfig["test"]} [test] */
export function holdfastProject(test = {}) {
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: conditions } },
    test: { include: ["test/**/*.test.ts"], testTimeout: 20_000, ...test },
  });
}
