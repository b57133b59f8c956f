import { describeObjectStoreContract } from "@holdfast/store-contract";
import { createMapStore, MapService, type MapStore } from "../src/index.js";

// One line per configuration, as every backend does.
describeObjectStoreContract("backend-template", {
  create: () => createMapStore({ service: new MapService() }),
  capabilities: {
    atomicConditionalUpdate: true,
    atomicConditionalDelete: true,
    maxBatchDelete: 100,
  },
  // How to make one key's delete fail on this store (the service's lock), so the suite can
  // check that deleteMany reports it per key and still deletes the rest.
  arrangeDeleteFailure: (store, key) => {
    const { service, prefix } = store as MapStore;
    service.holdKey(prefix + key);
    return () => service.release(prefix + key);
  },
});

describeObjectStoreContract("backend-template (under a prefix, small pages)", {
  create: () => createMapStore({ prefix: "tenant/a", pageSize: 7 }),
});
