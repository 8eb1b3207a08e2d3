// Format check (`npm run format:check`, part of `npm test`): only the layout rules the whole
// tree already keeps, so the check lands without a tree-wide reformat that would collide
// with every branch in flight. .editorconfig states the same rules for editors. Widen the
// list one rule at a time, each with the (small) diff that makes the tree keep it.
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'fixtures/**'] },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.base],
    // Other rules' disable comments are not this check's business.
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/linebreak-style': ['error', 'unix'],
      '@stylistic/eol-last': ['error', 'always'],
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/no-multiple-empty-lines': ['error', { max: 2, maxEOF: 0 }],
      '@stylistic/no-mixed-spaces-and-tabs': 'error',
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/object-curly-spacing': ['error', 'always'],
    },
  },
);
