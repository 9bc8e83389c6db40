import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run dev` serves the console with hot reload and forwards the API to a
// `memchat serve` on port 8000, so both run from one origin as in production.
const apiTarget = "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      "/api": { target: apiTarget, changeOrigin: false },
      "/healthz": { target: apiTarget, changeOrigin: false },
    },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
  },
});
