"""``python -m skillweave.cli``."""

from skillweave.cli import main

main()
