"""Client API: tf.logging (set_verbosity, info/warn/error ...), on Python's logger
"tensorflow" as TensorFlow's own tf_logging is. Thread-safe (the logging module is)."""

from __future__ import annotations

import logging as _logging
from typing import Any

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_logger = _logging.getLogger("tensorflow")
_counts: dict[Any, int] = {}


def get_logger() -> _logging.Logger:
    return _logger


def set_verbosity(v: int) -> None:
    _logger.setLevel(v)


def get_verbosity() -> int:
    return _logger.getEffectiveLevel()


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.log(level, msg, *args, **kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.debug(msg, *args, **kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.info(msg, *args, **kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.warning(msg, *args, **kwargs)


warn = warning


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.error(msg, *args, **kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.fatal(msg, *args, **kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    _logger.log(level, msg, *args, **kwargs)


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs the 1st, (n+1)th, (2n+1)th ... call from the same call site (msg)."""
    count = _counts.get(("every", msg), 0)
    _counts[("every", msg)] = count + 1
    if count % max(1, n) == 0:
        _logger.log(level, msg, *args)


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    count = _counts.get(("first", msg), 0)
    _counts[("first", msg)] = count + 1
    if count < n:
        _logger.log(level, msg, *args)


def log_if(level: int, msg: Any, condition: bool, *args: Any) -> None:
    if condition:
        _logger.log(level, msg, *args)


def flush() -> None:
    for handler in _logger.handlers:
        handler.flush()
