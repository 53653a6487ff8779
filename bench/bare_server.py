"""A bare pygls language server, no features: the start-up and memory baseline."""

from pygls.lsp.server import LanguageServer

if __name__ == "__main__":
    LanguageServer("bare", "0").start_io()
