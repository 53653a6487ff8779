// ESLint (flat config): the recommended rules of ESLint and of typescript-eslint; the types
// themselves are checked by `tsc --noEmit` (strict, tsconfig.json).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["out/", "dist/", "server/", "node_modules/", "*.vsix"] },
  { files: ["scripts/*.mjs"], languageOptions: { globals: { process: "readonly", console: "readonly" } } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
);
