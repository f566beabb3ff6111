// @ts-check
// ESLint with typescript-eslint's type-aware rules (issue 22.13): what the type checker cannot see. `npm run lint`
// (CI: .ci/run). Only rules that find defects, no style: formatting stays as it is.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/scripts/fixtures: inputs of the edge check (scripts/check-edges.ts), written to break the rules on purpose.
  { ignores: ['**/dist/**', 'node_modules/**', '.data/**', 'clients/typescript/schema.d.ts', 'src/platform/db/schema.generated.ts', 'test/scripts/fixtures/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits or catches: its failure is lost (or crashes the process as an unhandled rejection).
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise where a plain value is expected: an async callback to an API that ignores its result, `if (promise)`.
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch over a union that forgets a member (a new state, role or event type).
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `any` switches the type checker off, in tests too: the harness types an answer's body by method and path
      // from the OpenAPI document (test/harness/api.ts); JSON no type describes is `unknown`, read through
      // test/harness/json.ts. The generated files are ignored above.
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
