import { type AzuriteEnv, azuriteEnv, type RgwEnv, rgwEnv } from "./services.js";

/**
 * The storage options LanceDB and pylance (Rust object_store) take to reach the test RGW:
 * its endpoint over plain HTTP, path-style requests, the service's credentials.
 */
export function rgwLanceOptions(env: RgwEnv = rgwEnv()): Record<string, string> {
  return {
    aws_endpoint: env.endpoint,
    aws_access_key_id: env.accessKeyId,
    aws_secret_access_key: env.secretAccessKey,
    aws_region: env.region,
    allow_http: "true",
    aws_virtual_hosted_style_request: "false",
  };
}

/**
 * The storage options LanceDB and pylance take to reach Azurite: the account, key and blob
 * endpoint of its connection string. Not `azure_storage_use_emulator`: object_store then
 * ignores `azure_endpoint` and writes to 127.0.0.1:10000, whatever port Azurite listens on.
 */
export function azuriteLanceOptions(env: AzuriteEnv = azuriteEnv()): Record<string, string> {
  const part = (name: string) => {
    const value = new RegExp(`${name}=([^;]+)`).exec(env.connectionString)?.[1];
    if (!value) {
      throw new Error(
        `the Azurite connection string lacks ${name}: start it with bash tooling/services/azurite-start.sh`,
      );
    }
    return value;
  };
  return {
    account_name: part("AccountName"),
    account_key: part("AccountKey"),
    azure_endpoint: part("BlobEndpoint"),
    allow_http: "true",
  };
}
