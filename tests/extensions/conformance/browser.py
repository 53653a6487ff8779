"""A browser for the conformance tests (`BROWSER`): opens the authorization URL and follows
its redirects to agentls's loopback redirect, as a user's browser would after they signed in."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

try:
    with urllib.request.urlopen(sys.argv[1], timeout=30) as page:
        page.read()
except urllib.error.HTTPError as error:  # the loopback's answer to a refused sign-in
    sys.stderr.write(f"browser: {error}\n")
