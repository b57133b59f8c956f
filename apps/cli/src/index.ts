export { parseVersionArg, parseVersionRef } from "./args.js";
export { formatBytes, formatDuration, parseDuration } from "./duration.js";
export { ExitCode, exitCodeFor } from "./exit-codes.js";
export { main } from "./main.js";
export { type CliIo, errorShape, shouldColor } from "./output.js";
export { ErrorShape, JsonShapes, LeaseShape } from "./shapes.js";
export { formatStorageUrl, parseStorageUrl, parseStoreOptions, type StorageUrl } from "./url.js";
export { CLI_VERSION, isVersionRequest } from "./version.js";
