import { z } from "zod";
import { NameSchema } from "./names.js";

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** A ULID string (Crockford base32, 26 characters). */
export const UlidSchema = z.string().regex(ULID, "expected a ULID");

/** A version number: an exact integer >= 1. */
export const VersionNumberSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** `{ branch, version }`: one version of one branch. */
export const VersionRefSchema = z.object({ branch: NameSchema, version: VersionNumberSchema });
export type VersionRef = z.infer<typeof VersionRefSchema>;
