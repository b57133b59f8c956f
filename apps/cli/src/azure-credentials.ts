import { holdfastError, isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import type { CliIo } from "./output.js";

/** How the CLI reaches an `az://` URL, chosen before any request (docs/operations.md, "Credentials"). */
export type AzureCredentialChoice =
  | { readonly kind: "connection-string"; readonly connectionString: string }
  /** Azure's `DefaultAzureCredential` (environment, workload identity, managed identity, az login, ...) against `accountUrl`. */
  | { readonly kind: "default-credential"; readonly accountUrl: string; readonly account: string };

/** The `--account` / `--blob-endpoint` flags (their environment fallbacks are read here). */
export interface AzureFlags {
  readonly account?: string | undefined;
  readonly blobEndpoint?: string | undefined;
}

const ACCOUNT = /^[a-z0-9]{3,24}$/;

/**
 * Picks the credential source for an `az://` URL:
 * 1. `AZURE_STORAGE_CONNECTION_STRING` (unless `--account` names an account explicitly);
 * 2. an account (`--account` or `AZURE_STORAGE_ACCOUNT`) with `AZURE_STORAGE_KEY`: shared key;
 * 3. an account alone: `DefaultAzureCredential` against `--blob-endpoint` or
 *    `https://<account>.blob.core.windows.net`.
 * Invalid flags are `invalid-input` and no source at all is `auth`, both before any request.
 */
export function chooseAzureCredentials(
  env: CliIo["env"],
  flags: AzureFlags,
): AzureCredentialChoice {
  const direct = nonEmpty(env.AZURE_STORAGE_CONNECTION_STRING);
  if (direct && flags.account === undefined)
    return { kind: "connection-string", connectionString: direct };
  const account = flags.account ?? nonEmpty(env.AZURE_STORAGE_ACCOUNT);
  if (account !== undefined && !ACCOUNT.test(account)) {
    throw holdfastError(
      "invalid-input",
      "parse",
      `invalid Azure storage account name ${JSON.stringify(account)}`,
      {
        hint: "an account name has 3 to 24 lowercase letters and digits",
      },
    );
  }
  const endpoint = flags.blobEndpoint ?? nonEmpty(env.AZURE_STORAGE_BLOB_ENDPOINT);
  if (endpoint !== undefined) checkEndpoint(endpoint);
  if (account === undefined) {
    if (endpoint !== undefined) {
      throw holdfastError("invalid-input", "parse", "--blob-endpoint needs an account", {
        hint: "add --account <name> (or AZURE_STORAGE_ACCOUNT)",
      });
    }
    throw holdfastError("auth", "open", "no Azure credentials found", {
      code: "NoCredentials",
      hint: "set AZURE_STORAGE_CONNECTION_STRING; or AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY; or --account <name> (or AZURE_STORAGE_ACCOUNT) alone to sign in with DefaultAzureCredential (az login, managed or workload identity)",
    });
  }
  const accountUrl = (endpoint ?? `https://${account}.blob.core.windows.net`).replace(/\/+$/, "");
  const key = nonEmpty(env.AZURE_STORAGE_KEY ?? env.AZURE_STORAGE_ACCESS_KEY);
  if (key !== undefined) {
    const url = new URL(accountUrl);
    return {
      kind: "connection-string",
      connectionString: `DefaultEndpointsProtocol=${url.protocol.replace(":", "")};AccountName=${account};AccountKey=${key};BlobEndpoint=${accountUrl}`,
    };
  }
  return { kind: "default-credential", accountUrl, account };
}

/**
 * Opens the store with `DefaultAzureCredential` (loaded only on this path). Failures of the
 * credential chain become one `auth` error that says which chain ran and what it needs.
 */
export async function openWithDefaultCredential(
  choice: Extract<AzureCredentialChoice, { kind: "default-credential" }>,
  open: (credential: unknown) => Promise<ObjectStore>,
): Promise<ObjectStore> {
  // The SDK refuses bearer tokens over plain HTTP before sending anything; say so at open,
  // not at the first request (a read-only command opens without a probe request).
  if (/^http:\/\//i.test(choice.accountUrl)) {
    throw explainCredentialFailure(
      new Error("Bearer token authentication is not permitted for non-https URLs"),
      choice,
    );
  }
  const { DefaultAzureCredential } = await import("@azure/identity");
  try {
    return await open(new DefaultAzureCredential());
  } catch (error) {
    throw explainCredentialFailure(error, choice);
  }
}

/** Maps what the credential chain or a plain-HTTP endpoint says into a typed `auth` error. */
export function explainCredentialFailure(
  error: unknown,
  choice: Extract<AzureCredentialChoice, { kind: "default-credential" }>,
): unknown {
  const text = causeChain(error);
  if (/non-TLS|not permitted for non-https|https:\/\/ URLs/i.test(text)) {
    return holdfastError(
      "auth",
      "open",
      `token credentials need an https:// blob endpoint, not ${choice.accountUrl}`,
      {
        code: "TokenNeedsHttps",
        hint: "use https, or a connection string / account key (Azurite over http accepts only those)",
        cause: error,
      },
    );
  }
  if (
    /CredentialUnavailable|AggregateAuthentication|DefaultAzureCredential|AuthenticationRequired/i.test(
      text,
    )
  ) {
    return holdfastError(
      "auth",
      "open",
      `DefaultAzureCredential found no usable credential for account ${choice.account}`,
      {
        code: "NoCredentials",
        hint: "sign in (az login), run with a managed or workload identity, set AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET, or use AZURE_STORAGE_CONNECTION_STRING",
        cause: error,
      },
    );
  }
  return error;
}

// --- utils ---

function checkEndpoint(endpoint: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw holdfastError(
      "invalid-input",
      "parse",
      "--blob-endpoint must be an http:// or https:// URL",
    );
  }
  if (!/^https?:$/.test(url.protocol) || url.username !== "" || url.password !== "") {
    throw holdfastError(
      "invalid-input",
      "parse",
      "--blob-endpoint must be an http:// or https:// URL without credentials",
    );
  }
}

function causeChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let i = 0; i < 6 && current; i += 1) {
    if (current instanceof Error) {
      parts.push(
        `${current.name} ${current.message} ${isHoldfastError(current) ? (current.code ?? "") : ""}`,
      );
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.join(" | ");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
