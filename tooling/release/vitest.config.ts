import { holdfastProject } from "@holdfast/vitest-config";

// Packing, installing consumer projects and api-extractor are slow on a loaded machine.
export default holdfastProject({ testTimeout: 600_000, hookTimeout: 900_000 });
