# The fast habits in one command (CONTRIBUTING.md): `make check`, before each commit (the
# pre-commit hook runs it) and as the first step of CI (.ci/check). Each part is a target too.

.PHONY: check lint format types layers lua vscode-lint

check: lint format types layers lua vscode-lint

# ruff's rules include TID251: a program started anywhere but shell/launch.py fails it.
lint:
	ruff check server tests bench

# The import contracts of pyproject.toml ([tool.importlinter]): the doors independent, the
# loop and what lies under it importing no door, config/ no other part, shell/ no history/.
# A new import that breaks a layer fails here (docs/architecture.md, "Imports point one way").
layers:
	lint-imports

format:
	ruff format --check server tests bench

types:  # strict, over server/ and bench/ (pyproject.toml)
	mypy

# The Neovim plugin's Lua: stylua from npm, which ships its binary; config in .stylua.toml.
lua: editor-clients/nvim/node_modules
	cd editor-clients/nvim && npm run --silent lint

editor-clients/nvim/node_modules: editor-clients/nvim/package-lock.json
	cd editor-clients/nvim && npm ci --silent --no-audit --no-fund
	@touch $@

# The extension's tsc --noEmit (strict) and ESLint need its npm packages, which the vscode
# tier installs (editor-clients/vscode/scripts/setup-e2e.sh); without them this is skipped.
vscode-lint:
	@if [ -d editor-clients/vscode/node_modules ]; then \
		cd editor-clients/vscode && npm run --silent lint; \
	else \
		echo "vscode-lint: skipped, no editor-clients/vscode/node_modules (npm ci there)"; \
	fi
