export {
  AZURE_BACKEND,
  AZURE_MAX_BATCH_DELETE,
  type AzureCredential,
  type AzureStoreOptions,
  createAzureStore,
} from "./azure.js";
export { type OpenAzureStoreOptions, openAzureStore } from "./open.js";
