import { MemoryStore } from "@holdfast/conditional-store";
import { describeObjectStoreContract } from "@holdfast/store-contract";

describeObjectStoreContract("memory", { create: () => new MemoryStore() });
