"""Client API: tf.app (run, flags): parse the command line into FLAGS, call main, exit."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

from client import flags  # noqa: F401  (tf.app.flags)


def run(main: Callable[[list[str]], Any] | None = None, argv: list[str] | None = None) -> NoReturn:
    """tf.app.run: FLAGS parsed from `argv` (default sys.argv), then
    sys.exit(main(remaining_argv)); `main` defaults to __main__.main."""
    args = flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    main = main or sys.modules["__main__"].main
    sys.exit(main(args))
