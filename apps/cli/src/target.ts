import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { holdfastError, isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { refuseTableLocation } from "@holdfast/refs-lifecycle";
import {
  type AzureFlags,
  chooseAzureCredentials,
  openWithDefaultCredential,
} from "./azure-credentials.js";
import { formats } from "./format.js";
import type { CliIo } from "./output.js";
import { agree, parseStorageOptions, type StorageSettings } from "./storage-options.js";
import {
  formatStorageUrl,
  parseStorageUrl,
  parseStoreOptions,
  type StorageUrl,
  type StoreOptions,
} from "./url.js";

/** A validated storage target: URL plus connection options. Parsing it sends nothing. */
export interface Target {
  readonly url: StorageUrl;
  readonly options: StoreOptions;
  /** `--account` / `--blob-endpoint` for `az://` URLs. */
  readonly azure: AzureFlags;
  /** What `--storage-options-file` / `--storage-option` set (credentials included). */
  readonly settings: StorageSettings;
  /** Printable location, never with credentials. */
  readonly display: string;
}

/**
 * Validates a URL argument and the storage flags (and their environment fallbacks).
 * Throws `invalid-input` before anything is opened or written (docs/guarantees.md, invariant 6).
 */
export function parseTarget(urlText: string, opts: Record<string, unknown>, io: CliIo): Target {
  const url = parseStorageUrl(urlText, io.cwd);
  const flag = (name: string) =>
    typeof opts[name] === "string" ? (opts[name] as string) : undefined;
  if (url.scheme !== "az") {
    const misplaced = ["account", "blobEndpoint"].find((name) => flag(name) !== undefined);
    if (misplaced !== undefined) {
      throw holdfastError(
        "invalid-input",
        "parse",
        `--${misplaced === "account" ? "account" : "blob-endpoint"} applies only to az:// URLs, not ${formatStorageUrl(url)}`,
        { hint: "remove the flag, or use an az://container/prefix URL" },
      );
    }
  }
  if (url.scheme !== "s3") {
    // Flags for another backend are a mistake worth reporting, not ignoring.
    // --endpoint also names a GCS emulator; --region and --path-style are S3's alone.
    const misplaced =
      (url.scheme !== "gs" && flag("endpoint") !== undefined ? "endpoint" : undefined) ??
      (flag("region") !== undefined ? "region" : undefined) ??
      (opts.pathStyle === true ? "path-style" : undefined);
    if (misplaced !== undefined) {
      const where = misplaced === "endpoint" ? "s3:// and gs:// URLs" : "s3:// URLs";
      throw holdfastError(
        "invalid-input",
        "parse",
        `--${misplaced} applies only to ${where}, not ${formatStorageUrl(url)}`,
        {
          hint: `remove the flag, or use an ${misplaced === "endpoint" ? "s3:// or gs://" : "s3://"}bucket/prefix URL`,
        },
      );
    }
  }
  // Lance's storage_options keys, beside the flags: one translation (storage-options.ts);
  // a flag and an option that disagree are refused, the environment fills what neither set.
  const settings = parseStorageOptions(opts, url.scheme, io.cwd);
  const options =
    url.scheme === "s3"
      ? parseStoreOptions({
          endpoint:
            agree("--endpoint", flag("endpoint"), "aws_endpoint", settings.endpoint) ??
            nonEmpty(io.env.HOLDFAST_S3_ENDPOINT),
          region:
            agree("--region", flag("region"), "aws_region", settings.region) ??
            nonEmpty(io.env.HOLDFAST_S3_REGION),
          pathStyle:
            agree(
              "--path-style",
              opts.pathStyle === true ? true : undefined,
              "aws_virtual_hosted_style_request",
              settings.pathStyle,
            ) ?? parseBoolEnv(io.env.HOLDFAST_S3_PATH_STYLE),
        })
      : url.scheme === "gs"
        ? // The Google client libraries' own variable for an emulator.
          parseStoreOptions({
            endpoint: flag("endpoint") ?? nonEmpty(io.env.STORAGE_EMULATOR_HOST),
          })
        : {};
  const account = agree(
    "--account",
    flag("account"),
    "azure_storage_account_name",
    settings.azureAccount,
  );
  const blobEndpoint =
    agree("--blob-endpoint", flag("blobEndpoint"), "azure_storage_endpoint", settings.endpoint) ??
    (settings.azureEmulator === true
      ? `http://127.0.0.1:10000/${account ?? AZURITE_ACCOUNT}`
      : undefined);
  const azure: AzureFlags = {
    account: account ?? (settings.azureEmulator === true ? AZURITE_ACCOUNT : undefined),
    blobEndpoint,
  };
  return { url, options, azure, settings, display: formatStorageUrl(url) };
}

export interface OpenOptions {
  /** Create the local directory when missing (only `init` and `demo` do). @default false */
  readonly create?: boolean | undefined;
  /** Probe a remote store's conditional writes before use. @default true (the doctor probes itself) */
  readonly probe?: boolean | undefined;
  /**
   * The command sends no conditional write (it lists and reads; at most a storage-time
   * probe): the store is opened without the write probe, whose only purpose is to refuse a
   * store that ignores preconditions before a conditional write relies on them.
   * @default false
   */
  readonly readOnly?: boolean | undefined;
  /**
   * Refuse a URL inside a table or holding one ({@link refuseInsideTable}). Off only for
   * the stores that check opens itself. @default true
   */
  readonly locate?: boolean | undefined;
}

/**
 * Refuses a URL that points inside a table (a Lance branch's folder `t.lance/tree/dev`,
 * `_versions/`, `data/`, an index folder, `_holdfast/`, ...) or at a folder holding one:
 * `invalid-input` INSIDE_TABLE / HOLDS_TABLE naming the table's root, before anything is
 * written (the remote probe included) or read through the URL's own store. The rule is
 * `FormatRegistry.locate` (conformance/table-root/): one or two marker requests at the
 * URL, one or two more per ancestor followed by a table layout folder name.
 */
export async function refuseInsideTable(target: Target, io: CliIo): Promise<void> {
  const segments = urlSegments(target.url);
  const locating = formats.locate(segments, (at) =>
    openTarget(retarget(target, at), io, { probe: false, locate: false }).catch(
      (error: unknown) => {
        // A local folder that is missing or a file holds no table.
        if (target.url.scheme === "file" && isHoldfastError(error)) return null;
        throw error;
      },
    ),
  );
  const location = await locating.catch((error: unknown) => {
    throw noCredentials(target, error);
  });
  refuseTableLocation(location, (at) => formatStorageUrl(retarget(target, at).url));
}

/** The SDK's chain found no AWS credentials at all: said plainly (it names no secret). */
function noCredentials(target: Target, error: unknown): unknown {
  if (
    target.url.scheme === "s3" &&
    isHoldfastError(error, "auth") &&
    /CredentialsProviderError/.test(`${error.code} ${error.message}`)
  ) {
    return holdfastError("auth", "open", `no AWS credentials found for ${target.display}`, {
      code: "NoCredentials",
      hint: "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (the AWS default credential chain)",
      cause: error,
    });
  }
  return error;
}

/**
 * Opens the store a target names. Remote stores are probed first (create-only and if-match
 * must be enforced), so no protocol runs on a store that would break invariant 3.
 * Credentials come from the standard environment and SDK chains and are never printed.
 */
export async function openTarget(
  target: Target,
  io: CliIo,
  options: OpenOptions = {},
): Promise<ObjectStore> {
  const { url } = target;
  if (options.readOnly === true) options = { ...options, probe: false };
  if (options.locate !== false) await refuseInsideTable(target, io);
  switch (url.scheme) {
    case "file": {
      const info = await stat(url.root).catch(() => null);
      if (info && !info.isDirectory()) {
        throw holdfastError(
          "invalid-input",
          "open",
          `${url.root} is a file, not a dataset directory`,
          {
            key: url.root,
            code: "NOT_A_DIRECTORY",
            hint: "give the directory that holds (or will hold) the dataset",
          },
        );
      }
      if (!options.create) {
        if (!info) {
          throw holdfastError("not-found", "open", `no dataset at ${url.root}`, {
            hint: `create one with: holdfast init ${url.root}`,
          });
        }
      }
      const { createLocalStore } = await import("@holdfast/backends-local");
      return createLocalStore({ root: url.root, createRoot: options.create === true });
    }
    case "s3": {
      const { openS3Store, createS3Store } = await import("@holdfast/backends-s3");
      const opening = (
        options.probe === false
          ? async (o: Parameters<typeof createS3Store>[0]) => createS3Store(o)
          : openS3Store
      )({
        bucket: url.bucket,
        prefix: url.prefix,
        ...(target.options.endpoint === undefined ? {} : { endpoint: target.options.endpoint }),
        ...(target.options.region === undefined
          ? io.env.AWS_REGION || io.env.AWS_DEFAULT_REGION || target.options.endpoint === undefined
            ? {}
            : { region: "us-east-1" }
          : { region: target.options.region }),
        ...(target.options.pathStyle === undefined
          ? {}
          : { forcePathStyle: target.options.pathStyle }),
        ...(target.settings.accessKeyId === undefined ||
        target.settings.secretAccessKey === undefined
          ? {}
          : {
              credentials: {
                accessKeyId: target.settings.accessKeyId,
                secretAccessKey: target.settings.secretAccessKey,
                ...(target.settings.sessionToken === undefined
                  ? {}
                  : { sessionToken: target.settings.sessionToken }),
              },
            }),
      });
      return opening.catch((error: unknown) => {
        throw noCredentials(target, error);
      });
    }
    case "gs": {
      const { openGcsStore, createGcsStore } = await import("@holdfast/backends-gcs");
      const open =
        options.probe === false
          ? async (o: Parameters<typeof createGcsStore>[0]) => createGcsStore(o)
          : openGcsStore;
      // Credentials: Application Default Credentials, which the client finds itself; an
      // emulator endpoint is reached without any.
      return open({
        bucket: url.bucket,
        prefix: url.prefix,
        ...(target.options.endpoint === undefined ? {} : { endpoint: target.options.endpoint }),
        ...(nonEmpty(io.env.GOOGLE_CLOUD_PROJECT) === undefined
          ? {}
          : { projectId: io.env.GOOGLE_CLOUD_PROJECT }),
        ...(target.settings.gcsServiceAccountPath === undefined
          ? {}
          : { keyFilename: resolve(io.cwd, target.settings.gcsServiceAccountPath) }),
      });
    }
    case "az": {
      // Chosen before anything loads or is sent (docs/operations.md, "Credentials").
      const { azureConnectionString, azureKey } = target.settings;
      const choice = chooseAzureCredentials(
        {
          ...io.env,
          ...(azureConnectionString === undefined
            ? {}
            : { AZURE_STORAGE_CONNECTION_STRING: azureConnectionString }),
          ...(azureKey === undefined ? {} : { AZURE_STORAGE_KEY: azureKey }),
        },
        target.azure,
      );
      const { openAzureStore, createAzureStore } = await import("@holdfast/backends-azure");
      const open =
        options.probe === false
          ? async (o: Parameters<typeof createAzureStore>[0]) => createAzureStore(o)
          : openAzureStore;
      if (choice.kind === "connection-string") {
        return open({
          container: url.container,
          prefix: url.prefix,
          connectionString: choice.connectionString,
        });
      }
      return openWithDefaultCredential(choice, (credential) =>
        open({
          container: url.container,
          prefix: url.prefix,
          accountUrl: choice.accountUrl,
          credential: credential as Parameters<typeof createAzureStore>[0]["credential"],
        }),
      );
    }
  }
}

/** A protocol context with production clock, ids and sleep. */
export function contextFor(store: ObjectStore): ProtocolContext {
  return createContext(store);
}

/** Azurite's development account (`azure_storage_use_emulator`; its key comes as any other). */
const AZURITE_ACCOUNT = "devstoreaccount1";

// --- utils ---

/** The URL's path in its namespace (the file system, a bucket, a container), as segments. */
function urlSegments(url: StorageUrl): string[] {
  const path = url.scheme === "file" ? url.root : url.prefix;
  return path.split("/").filter((s) => s !== "");
}

/** The same target at another folder of its namespace. */
function retarget(target: Target, segments: readonly string[]): Target {
  const path = segments.join("/");
  const url: StorageUrl =
    target.url.scheme === "file"
      ? { scheme: "file", root: `/${path}` }
      : { ...target.url, prefix: path };
  return { ...target, url, display: formatStorageUrl(url) };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function parseBoolEnv(value: string | undefined): boolean | undefined {
  if (value === undefined || value === "") return undefined;
  if (/^(1|true|yes)$/i.test(value)) return true;
  if (/^(0|false|no)$/i.test(value)) return false;
  throw holdfastError(
    "invalid-input",
    "parse",
    `HOLDFAST_S3_PATH_STYLE must be true or false, got ${JSON.stringify(value)}`,
  );
}
