// Test-only access to the Azurite started by tooling/services/azurite-start.sh. A missing or
// silent Azurite fails the run with instructions: these tests never skip.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  AccountSASPermissions,
  AccountSASResourceTypes,
  AccountSASServices,
  BlobServiceClient,
  generateAccountSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { ulidIds } from "@holdfast/conditional-store";

export interface AzuriteTarget {
  connectionString: string;
  container: string;
  /** `http://127.0.0.1:<port>` of the blob service (what a fault proxy forwards to). */
  origin: string;
}

const START_HINT =
  "start it with `bash tooling/services/azurite-start.sh` (from the repository root), or set AZURE_STORAGE_CONNECTION_STRING and HOLDFAST_AZURE_CONTAINER";

/** Reads the connection from the environment, else from the env file azurite-start.sh writes. */
export function azuriteTarget(): AzuriteTarget {
  let connectionString = process.env.AZURE_STORAGE_CONNECTION_STRING;
  let container = process.env.HOLDFAST_AZURE_CONTAINER;
  if (!connectionString) {
    const file = join(process.env.HOLDFAST_SERVICES_DIR ?? "/tmp/holdfast-services", "azurite.env");
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      throw new Error(
        `Azurite is not configured: no AZURE_STORAGE_CONNECTION_STRING and no ${file}; ${START_HINT}`,
      );
    }
    const vars = parseEnvFile(text);
    connectionString = vars.AZURE_STORAGE_CONNECTION_STRING;
    container ??= vars.HOLDFAST_AZURE_CONTAINER;
    if (!connectionString)
      throw new Error(`${file} lacks AZURE_STORAGE_CONNECTION_STRING; ${START_HINT}`);
  }
  const endpoint = /BlobEndpoint=([^;]+)/.exec(connectionString)?.[1];
  if (!endpoint) throw new Error(`the connection string has no BlobEndpoint; ${START_HINT}`);
  return {
    connectionString,
    container: container || "holdfast-test",
    origin: new URL(endpoint).origin,
  };
}

/** Ensures the test container exists; fails with the start hint when Azurite does not answer. */
export async function ensureContainer(target: AzuriteTarget): Promise<void> {
  const service = BlobServiceClient.fromConnectionString(target.connectionString, {
    retryOptions: { maxTries: 1 },
  });
  try {
    await service.getContainerClient(target.container).createIfNotExists();
  } catch (error) {
    throw new Error(`Azurite at ${target.origin} did not answer (${String(error)}); ${START_HINT}`);
  }
}

/** The same connection string aimed at another blob service origin (e.g. a fault proxy). */
export function withOrigin(connectionString: string, origin: string): string {
  return connectionString.replace(/BlobEndpoint=([^;]+)/, (_, endpoint: string) => {
    const url = new URL(endpoint);
    return `BlobEndpoint=${origin}${url.pathname}`;
  });
}

/**
 * An account-SAS connection string for `target`, optionally aimed at another origin. A SAS
 * signs no headers, so a fault proxy may strip them without re-signing.
 */
export function sasConnectionString(target: AzuriteTarget, origin = target.origin): string {
  const name = /AccountName=([^;]+)/.exec(target.connectionString)?.[1];
  const key = /AccountKey=([^;]+)/.exec(target.connectionString)?.[1];
  if (!name || !key) throw new Error("the Azurite connection string lacks AccountName/AccountKey");
  const sas = generateAccountSASQueryParameters(
    {
      expiresOn: new Date(Date.now() + 60 * 60 * 1000),
      permissions: AccountSASPermissions.parse("rwdlac"),
      resourceTypes: AccountSASResourceTypes.parse("sco").toString(),
      services: AccountSASServices.parse("b").toString(),
    },
    new StorageSharedKeyCredential(name, key),
  ).toString();
  const endpoint = /BlobEndpoint=([^;]+)/.exec(withOrigin(target.connectionString, origin))?.[1];
  return `BlobEndpoint=${endpoint};SharedAccessSignature=${sas}`;
}

const ids = ulidIds();

/** A fresh prefix per store, so tests never see each other's objects. */
export function freshPrefix(label: string): string {
  return `test/${label}/${ids.next().toLowerCase()}`;
}

function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2]!.trim();
    if (/^'.*'$|^".*"$/.test(value)) value = value.slice(1, -1);
    vars[match[1]!] = value;
  }
  return vars;
}
