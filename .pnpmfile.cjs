// pnpm hooks for this workspace.
module.exports = {
  hooks: {
    // What a published manifest carries: no dev-only (often private) packages and no
    // workspace scripts, which mean nothing to a consumer.
    beforePacking(manifest) {
      const { devDependencies: _dev, scripts: _scripts, ...published } = manifest;
      return published;
    },
  },
};
