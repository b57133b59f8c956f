import { defineConfig } from "vite";

// The dashboard is built into the server package's dist/web, which the server serves at /.
export default defineConfig({
  root: import.meta.dirname,
  base: "./",
  build: { outDir: "../dist/web", emptyOutDir: true, chunkSizeWarningLimit: 2000 },
});
