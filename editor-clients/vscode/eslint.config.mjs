// ESLint (flat config): the recommended rules of ESLint and of typescript-eslint; the types
// themselves are checked by `tsc --noEmit` (strict, tsconfig.json).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["out/", "node_modules/", "*.vsix"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
);
