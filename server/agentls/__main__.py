import sys

try:
    from .cli import main

    sys.exit(main())
except KeyboardInterrupt:  # Ctrl-C while Python was still loading agentls: nothing began
    sys.exit(130)
