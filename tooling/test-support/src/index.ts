// The public API of @holdfast/test-support (private: tests only).
export { azuriteLanceOptions, rgwLanceOptions } from "./lance.js";
export { holdfastPython, PYLANCE_TABLES, runPylanceTables } from "./python.js";
export {
  type AzuriteEnv,
  azuriteEnv,
  type GcsEnv,
  gcsEnv,
  type RgwEnv,
  readServiceEnv,
  rgwEnv,
  type ServiceName,
} from "./services.js";
export { type TempDataset, type TempDir, tempDataset, tempDir } from "./temp.js";
