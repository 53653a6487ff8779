import sys

from .terminal import interrupts

try:
    with interrupts.deferred():  # Ctrl-C while Python loads agentls: terminal/interrupts.py
        from .cli import main
    sys.exit(main())
except KeyboardInterrupt:  # Ctrl-C while Python was still loading agentls: nothing began
    sys.exit(interrupts.EXIT_CODE)
