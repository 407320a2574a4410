"""`python -m truthbase.cli`."""

from . import main

main()
