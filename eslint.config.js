// Lint: sizes of files and functions (the layering itself is checked by dependency-cruiser,
// .dependency-cruiser.cjs). No formatter runs here: see NOTES.md.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'fixtures/**'] },
  {
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    extends: [tseslint.configs.base],
    rules: {
      'max-lines': ['error', { max: 600 }],
      'max-lines-per-function': ['error', { max: 120 }],
    },
  },
  // Parsers hold generated tables and one grammar per file: the file size is the format's.
  { files: ['src/parsers/**'], rules: { 'max-lines': 'off' } },
);
