import sys

from . import interrupts

try:
    with interrupts.deferred():  # a Ctrl-C while Python loads agentls: see interrupts.py
        from .cli import main
    sys.exit(main())
except KeyboardInterrupt:  # Ctrl-C while Python was still loading agentls: nothing began
    sys.exit(interrupts.EXIT_CODE)
