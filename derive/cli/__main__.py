"""``python -m derive.cli``: the same command line as the ``derive`` script."""

from derive.cli import entry

entry()
