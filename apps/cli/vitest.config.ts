import { holdfastProject } from "@holdfast/vitest-config";

// The e2e suite spawns the built CLI (one Node start per command) against real services.
export default holdfastProject({ testTimeout: 120_000, hookTimeout: 60_000 });
