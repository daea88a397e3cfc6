// ESLint for Kassa (issue 13): typescript-eslint's recommended rules, no line over 120 characters
// in src/, and Prettier's formatting checked by `prettier --check` (npm run lint), not by ESLint.
//
// typescript-eslint parses with TypeScript's JavaScript API, which TypeScript 7 (the compiler
// Kassa builds with) no longer ships. The lint workspace tools/lint holds TypeScript 5 for it;
// while this file loads, `require('typescript')` made by the lint packages resolves there.
import Module from 'node:module';

const lintTools = Module.createRequire(new URL('./tools/lint/package.json', import.meta.url));
const typescript5 = lintTools.resolve('typescript');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveTypescript5(request, ...rest) {
  return request === 'typescript' ? typescript5 : resolveFilename.call(this, request, ...rest);
};
const { default: tseslint } = await import(lintTools.resolve('typescript-eslint'));

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '**/node_modules/**',
      'dist/**',
      'clients/typescript/dist/**',
      'src/generated/**',
      'coverage/**',
      '.kassa/**',
      'bench/results/**',
    ],
  },
  {
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    extends: [...tseslint.configs.recommended],
    rules: {
      // `_name` marks a parameter or binding kept for its position or to leave it out of a rest.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'max-len': ['error', { code: 120, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    // Tests read JSON answers whose shape is what they assert: `any` there is the point, not a gap.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Browser scripts and Node scripts: their globals, and CommonJS where a file is CommonJS.
    files: ['web/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', console: 'readonly' },
    },
  },
);
