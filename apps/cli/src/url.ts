import { isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { holdfastError, validateKey } from "@holdfast/conditional-store";
import { z } from "zod";

/** A parsed storage URL: where a dataset lives. Never carries credentials. */
export type StorageUrl =
  | { readonly scheme: "file"; readonly root: string }
  | { readonly scheme: "s3"; readonly bucket: string; readonly prefix: string }
  | { readonly scheme: "az"; readonly container: string; readonly prefix: string }
  | { readonly scheme: "gs"; readonly bucket: string; readonly prefix: string };

const S3_BUCKET = z
  .string()
  .min(3, "an S3 bucket name has 3 to 63 characters")
  .max(63, "an S3 bucket name has 3 to 63 characters")
  .regex(
    /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/,
    "an S3 bucket name uses lowercase letters, digits, '.' and '-', and starts and ends with a letter or digit",
  )
  .refine((name) => !name.includes(".."), "an S3 bucket name has no '..'")
  .refine((name) => !/^\d+\.\d+\.\d+\.\d+$/.test(name), "an S3 bucket name is not an IP address");

const AZ_CONTAINER = z
  .string()
  .min(3, "an Azure container name has 3 to 63 characters")
  .max(63, "an Azure container name has 3 to 63 characters")
  .regex(
    /^[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]$/,
    "an Azure container name uses lowercase letters, digits and single '-', and starts and ends with a letter or digit",
  );

// https://cloud.google.com/storage/docs/buckets#naming
const GS_BUCKET = z
  .string()
  .min(3, "a GCS bucket name has 3 to 63 characters (222 with dots)")
  .max(222, "a GCS bucket name has 3 to 63 characters (222 with dots)")
  .regex(
    /^[a-z0-9][a-z0-9._-]*[a-z0-9]$/,
    "a GCS bucket name uses lowercase letters, digits, '-', '_' and '.', and starts and ends with a letter or digit",
  )
  .refine(
    (name) => name.split(".").every((part) => part.length > 0 && part.length <= 63),
    "each dot-separated part of a GCS bucket name has 1 to 63 characters",
  )
  .refine((name) => !name.startsWith("goog"), "a GCS bucket name does not start with 'goog'")
  .refine((name) => !/^\d+\.\d+\.\d+\.\d+$/.test(name), "a GCS bucket name is not an IP address");

/** Options that say how to reach an S3-compatible store (or a GCS emulator); validated before any request. */
export const StoreOptionsSchema = z
  .object({
    endpoint: z
      .url({ protocol: /^https?$/, error: "--endpoint must be an http:// or https:// URL" })
      .refine((u) => {
        const parsed = new URL(u);
        return parsed.username === "" && parsed.password === "";
      }, "--endpoint must not contain credentials (use the standard AWS environment or profile)")
      .optional(),
    region: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/, "--region looks like us-east-1 (lowercase letters, digits, '-')")
      .optional(),
    pathStyle: z.boolean().optional(),
  })
  .strict();

export type StoreOptions = z.infer<typeof StoreOptionsSchema>;

const SUPPORTED =
  "use a local path, file:///abs/path, s3://bucket/prefix, az://container/prefix or gs://bucket/prefix";

/**
 * Parses a storage URL (bare path, `file://`, `s3://bucket/prefix`, `az://container/prefix`,
 * `gs://bucket/prefix`).
 * Malformed input throws `invalid-input` before anything is opened (docs/guarantees.md, invariant 6); a URL
 * holding credentials is refused without echoing them.
 */
export function parseStorageUrl(input: string, cwd: string = process.cwd()): StorageUrl {
  const fail = (why: string, shown: string = input) =>
    holdfastError(
      "invalid-input",
      "parse",
      `invalid storage URL ${JSON.stringify(shown)}: ${why}`,
      {
        hint: SUPPORTED,
      },
    );
  if (typeof input !== "string" || input.trim() === "") throw fail("empty");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
  if (/[\u0000-\u001f\u007f]/.test(input)) throw fail("contains a control character", "…");

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(input)?.[1]?.toLowerCase();
  if (scheme === undefined || (scheme.length === 1 && /^[A-Za-z]:[\\/]/.test(input))) {
    // A bare path (a one-letter "scheme" is a Windows drive letter).
    return { scheme: "file", root: resolve(cwd, input) };
  }
  if (!input.slice(scheme.length + 1).startsWith("//")) {
    throw fail(`expected ${scheme}:// followed by a location`);
  }
  const rest = input.slice(scheme.length + 3);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  if (authority.includes("@")) {
    // Never echo the URL: the part before '@' is a secret.
    throw fail(
      "credentials do not belong in the URL; use the standard environment or SDK credential chain",
      `${scheme}://***@…`,
    );
  }
  if (/[?#]/.test(rest)) throw fail("query strings and fragments are not supported");

  switch (scheme) {
    case "file": {
      if (authority !== "" && authority !== "localhost") {
        throw fail("a file:// URL names no host: write file:///absolute/path");
      }
      let path: string;
      try {
        path = fileURLToPath(`file://${rest.slice(authority.length)}`);
      } catch (error) {
        throw fail(error instanceof Error ? error.message : "not a file URL");
      }
      if (!isAbsolute(path)) throw fail("a file:// URL needs an absolute path");
      return { scheme: "file", root: resolve(path) };
    }
    case "s3": {
      const bucket = S3_BUCKET.safeParse(authority);
      if (!bucket.success) throw fail(firstIssue(bucket.error));
      return { scheme: "s3", bucket: bucket.data, prefix: parsePrefix(rest, authority, fail) };
    }
    case "az":
    case "azure": {
      const container = AZ_CONTAINER.safeParse(authority);
      if (!container.success) throw fail(firstIssue(container.error));
      return {
        scheme: "az",
        container: container.data,
        prefix: parsePrefix(rest, authority, fail),
      };
    }
    case "gs": {
      const bucket = GS_BUCKET.safeParse(authority);
      if (!bucket.success) throw fail(firstIssue(bucket.error));
      return { scheme: "gs", bucket: bucket.data, prefix: parsePrefix(rest, authority, fail) };
    }
    default:
      throw fail(`unsupported scheme ${scheme}://`);
  }
}

/** Validates store options (from flags and environment); throws `invalid-input`. */
export function parseStoreOptions(raw: Record<string, unknown>): StoreOptions {
  const cleaned = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
  const parsed = StoreOptionsSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw holdfastError("invalid-input", "parse", firstIssue(parsed.error), {
      hint: "see holdfast --help for the storage options",
    });
  }
  return parsed.data;
}

/** A printable form of a storage URL (never with credentials). */
export function formatStorageUrl(url: StorageUrl): string {
  switch (url.scheme) {
    case "file":
      return url.root;
    case "s3":
      return `s3://${url.bucket}${url.prefix === "" ? "" : `/${url.prefix}`}`;
    case "az":
      return `az://${url.container}${url.prefix === "" ? "" : `/${url.prefix}`}`;
    case "gs":
      return `gs://${url.bucket}${url.prefix === "" ? "" : `/${url.prefix}`}`;
  }
}

// --- utils ---

function parsePrefix(rest: string, authority: string, fail: (why: string) => Error): string {
  const prefix = rest.slice(authority.length).replace(/^\/+/, "").replace(/\/+$/, "");
  if (prefix === "") return "";
  try {
    validateKey(prefix, "parse");
  } catch (error) {
    throw fail(`bad prefix: ${error instanceof Error ? error.message : String(error)}`);
  }
  return prefix;
}

function firstIssue(error: z.ZodError): string {
  return error.issues[0]?.message ?? "invalid";
}
