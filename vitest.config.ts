import { defineConfig } from 'vitest/config';

// Two projects: unit/UI tests run in parallel; lab tests touch the real kernel
// (network namespaces, netfilter, conntrack) and must run one file at a time.
export default defineConfig({
  test: {
    env: { TZ: 'UTC', LANG: 'C.UTF-8', FORCE_COLOR: '0' },
    // Compact model objects compare by their plain form (src/model/plain.ts).
    setupFiles: ['test/helpers/plain-equality.ts', 'test/helpers/parsers-loaded.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/ui/**/*.test.tsx', 'test/ui/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'lab',
          include: ['test/lab/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
