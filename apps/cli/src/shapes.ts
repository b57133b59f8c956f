// The `--json` shapes live in @holdfast/api-shapes so the HTTP server answers with the same documents.
export { ErrorShape, JsonShapes, LeaseShape } from "@holdfast/api-shapes";
