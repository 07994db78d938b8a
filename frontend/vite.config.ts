import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev` serves the page with hot reload and sends the API to a server on port 8000.
export default defineConfig({
  plugins: [react()],
  build: { chunkSizeWarningLimit: 800 },
  server: {
    proxy: {
      '/api': 'http://127.0.0.1:8000',
      '/health': 'http://127.0.0.1:8000',
    },
  },
});
