import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { holdfastError } from "@holdfast/conditional-store";
import { z } from "zod";

// The one translation of Lance's `storage_options` (object_store's configuration keys, as
// Lance and pylance users already write them) into the settings the CLI's flags give.

/** What `storage_options` may set, per backend, in the CLI's own terms. */
export interface StorageSettings {
  endpoint?: string;
  region?: string;
  pathStyle?: boolean;
  allowHttp?: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  azureAccount?: string;
  azureKey?: string;
  azureConnectionString?: string;
  azureEmulator?: boolean;
  gcsServiceAccountPath?: string;
}

type Scheme = "s3" | "az" | "gs";
type Setting = keyof StorageSettings;

/** One accepted key: the backend it configures, the setting, and how its text is read. */
interface Entry {
  readonly scheme: Scheme;
  readonly setting: Setting;
  readonly read: "text" | "bool" | "negated-bool";
}

const text = (scheme: Scheme, setting: Setting): Entry => ({ scheme, setting, read: "text" });
const bool = (scheme: Scheme, setting: Setting): Entry => ({ scheme, setting, read: "bool" });

/**
 * Every key accepted (lower case, as object_store parses them, with its aliases). A key not
 * here is refused (`invalid-input`), never ignored: a misspelt credential must not fall
 * back to another silently.
 */
export const STORAGE_OPTION_KEYS: Readonly<Record<string, Entry>> = {
  // S3 (object_store AmazonS3ConfigKey)
  aws_endpoint: text("s3", "endpoint"),
  aws_endpoint_url: text("s3", "endpoint"),
  endpoint_url: text("s3", "endpoint"),
  aws_region: text("s3", "region"),
  region: text("s3", "region"),
  aws_default_region: text("s3", "region"),
  aws_access_key_id: text("s3", "accessKeyId"),
  access_key_id: text("s3", "accessKeyId"),
  aws_secret_access_key: text("s3", "secretAccessKey"),
  secret_access_key: text("s3", "secretAccessKey"),
  aws_session_token: text("s3", "sessionToken"),
  aws_token: text("s3", "sessionToken"),
  session_token: text("s3", "sessionToken"),
  aws_virtual_hosted_style_request: { scheme: "s3", setting: "pathStyle", read: "negated-bool" },
  virtual_hosted_style_request: { scheme: "s3", setting: "pathStyle", read: "negated-bool" },
  // object_store's client key; Lance needs it for an http:// endpoint
  allow_http: bool("s3", "allowHttp"),
  aws_allow_http: bool("s3", "allowHttp"),
  // Azure (object_store AzureConfigKey; the connection string is Azure's own)
  azure_storage_account_name: text("az", "azureAccount"),
  account_name: text("az", "azureAccount"),
  azure_storage_account_key: text("az", "azureKey"),
  azure_storage_access_key: text("az", "azureKey"),
  account_key: text("az", "azureKey"),
  access_key: text("az", "azureKey"),
  azure_storage_connection_string: text("az", "azureConnectionString"),
  azure_storage_endpoint: text("az", "endpoint"),
  azure_endpoint: text("az", "endpoint"),
  azure_storage_use_emulator: bool("az", "azureEmulator"),
  use_emulator: bool("az", "azureEmulator"),
  // GCS (object_store GoogleConfigKey)
  google_service_account: text("gs", "gcsServiceAccountPath"),
  google_service_account_path: text("gs", "gcsServiceAccountPath"),
  service_account: text("gs", "gcsServiceAccountPath"),
  service_account_path: text("gs", "gcsServiceAccountPath"),
  google_application_credentials: text("gs", "gcsServiceAccountPath"),
};

const SCHEME_WORDS: Record<Scheme, string> = { s3: "s3://", az: "az://", gs: "gs://" };

const FileShape = z.record(z.string(), z.union([z.string(), z.boolean(), z.number()]));

/**
 * The `--storage-options-file <json>` and repeated `--storage-option key=value` of a
 * command, for a URL of `scheme`: every key known and for this backend, every value well
 * formed, a key given twice with two values refused. Throws `invalid-input` before anything
 * is opened. Secrets are never echoed: errors name keys, not values.
 */
export function parseStorageOptions(
  opts: Record<string, unknown>,
  scheme: Scheme | "file",
  cwd: string,
): StorageSettings {
  const pairs: [string, string, string][] = []; // key, value, where it came from
  const file = typeof opts.storageOptionsFile === "string" ? opts.storageOptionsFile : undefined;
  if (file !== undefined) {
    const path = resolve(cwd, file);
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw invalid(`cannot read --storage-options-file ${path} as JSON`, {
        code: "STORAGE_OPTIONS_FILE",
        cause: error,
        hint: 'a JSON object of strings, as Lance\'s storage_options: {"aws_region": "eu-west-1"}',
      });
    }
    const shape = FileShape.safeParse(parsed);
    if (!shape.success) {
      throw invalid(`--storage-options-file ${path} is not an object of string values`, {
        code: "STORAGE_OPTIONS_FILE",
        hint: 'a JSON object of strings, as Lance\'s storage_options: {"aws_region": "eu-west-1"}',
      });
    }
    for (const [key, value] of Object.entries(shape.data)) pairs.push([key, String(value), path]);
  }
  const repeated = opts.storageOption;
  for (const item of Array.isArray(repeated) ? repeated : []) {
    const text = String(item);
    const at = text.indexOf("=");
    if (at <= 0) {
      throw invalid(`--storage-option ${JSON.stringify(text.split("=")[0])} has no value`, {
        code: "STORAGE_OPTION_MALFORMED",
        hint: "write it as key=value, e.g. --storage-option aws_region=eu-west-1",
      });
    }
    pairs.push([text.slice(0, at), text.slice(at + 1), "--storage-option"]);
  }
  const settings: StorageSettings = {};
  const from = new Map<Setting, string>();
  for (const [rawKey, value, where] of pairs) {
    const key = rawKey.trim().toLowerCase();
    const entry = STORAGE_OPTION_KEYS[key];
    if (entry === undefined) {
      throw invalid(`unknown storage option ${JSON.stringify(rawKey)} (${where})`, {
        code: "UNKNOWN_STORAGE_OPTION",
        hint: "holdfast takes object_store's keys for S3, Azure and GCS (apps/cli/README.md, Storage options)",
      });
    }
    if (scheme !== entry.scheme) {
      throw invalid(
        `storage option ${key} is for ${SCHEME_WORDS[entry.scheme]} URLs, not ${scheme === "file" ? "a local path" : SCHEME_WORDS[scheme]}`,
        { code: "STORAGE_OPTION_MISPLACED", hint: "remove it, or use a URL of that store" },
      );
    }
    const read = readValue(entry, key, value);
    const earlier = from.get(entry.setting);
    if (earlier !== undefined && settings[entry.setting] !== read) {
      throw invalid(`storage options ${earlier} and ${key} disagree`, {
        code: "STORAGE_OPTION_CONFLICT",
        hint: "give each setting once",
      });
    }
    from.set(entry.setting, key);
    (settings as Record<string, unknown>)[entry.setting] = read;
  }
  const s3Keys = settings.accessKeyId !== undefined || settings.secretAccessKey !== undefined;
  if (s3Keys && (settings.accessKeyId === undefined || settings.secretAccessKey === undefined)) {
    throw invalid("aws_access_key_id and aws_secret_access_key go together", {
      code: "STORAGE_OPTION_INCOMPLETE",
      hint: "give both, or neither (the AWS default chain then finds the credentials)",
    });
  }
  if (settings.sessionToken !== undefined && !s3Keys) {
    throw invalid("aws_session_token needs aws_access_key_id and aws_secret_access_key", {
      code: "STORAGE_OPTION_INCOMPLETE",
    });
  }
  if (settings.allowHttp === false && settings.endpoint?.startsWith("http://")) {
    throw invalid("allow_http is false but the endpoint is http://", {
      code: "STORAGE_OPTION_CONFLICT",
      hint: "use an https:// endpoint, or allow_http=true",
    });
  }
  return settings;
}

/**
 * A flag and a storage option that set the same thing must agree: a disagreement is refused
 * (`invalid-input`), never settled by precedence.
 */
export function agree<T>(
  flag: string,
  flagValue: T | undefined,
  option: string,
  optionValue: T | undefined,
): T | undefined {
  if (flagValue !== undefined && optionValue !== undefined && flagValue !== optionValue) {
    throw invalid(`${flag} and the storage option ${option} disagree`, {
      code: "STORAGE_OPTION_CONFLICT",
      hint: `give it once: the flag or the storage option`,
    });
  }
  return flagValue ?? optionValue;
}

function readValue(entry: Entry, key: string, value: string): string | boolean {
  if (entry.read === "text") {
    if (value === "")
      throw invalid(`storage option ${key} is empty`, { code: "STORAGE_OPTION_MALFORMED" });
    return value;
  }
  const v = value.trim().toLowerCase();
  const yes = /^(true|1|yes)$/.test(v);
  if (!yes && !/^(false|0|no)$/.test(v)) {
    throw invalid(`storage option ${key} must be true or false`, {
      code: "STORAGE_OPTION_MALFORMED",
    });
  }
  return entry.read === "negated-bool" ? !yes : yes;
}

function invalid(
  message: string,
  fields: { code: string; hint?: string; cause?: unknown },
): ReturnType<typeof holdfastError> {
  return holdfastError("invalid-input", "parse", message, fields);
}
