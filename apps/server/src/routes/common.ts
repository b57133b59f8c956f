import { NameParam, ProblemShape } from "@holdfast/api-shapes";
import { z } from "zod";

/** Path parameter `dataset`. */
export const DatasetParams = z.strictObject({
  dataset: z.string().min(1).max(128),
});

/** Path parameters `dataset` and `name` (a tag or a branch). */
export const NamedParams = DatasetParams.extend({ name: NameParam });

/** `force=true` deletes a branch even while leases pin its versions (they end with it). */
export const DeleteQuery = z.strictObject({ force: z.enum(["true", "false"]).optional() });

/** The problem answers a data route can give, documented in OpenAPI beside its success. */
export function withProblems<T extends Record<number, z.ZodType>>(ok: T) {
  return {
    ...ok,
    400: ProblemShape,
    401: ProblemShape,
    403: ProblemShape,
    404: ProblemShape,
    409: ProblemShape,
    429: ProblemShape,
    502: ProblemShape,
  };
}

/** Security requirement of every authenticated route, for OpenAPI. */
export const BEARER = [{ bearerAuth: [] }];
