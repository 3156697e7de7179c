"""``python -m derive``: the same command line as the ``derive`` script."""

from derive.cli import entry

entry()
