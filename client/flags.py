"""Client API: tf.flags / tf.app.flags (DEFINE_string/integer/float/boolean/list/enum, FLAGS).

A small stand-in for absl.flags, which TensorFlow re-exports: flags are defined at import
time, parsed from argv by `FLAGS(argv)` (what `tf.app.run` does), and read as attributes.
Reading a flag before parsing gives its default (TF 1.x's lenient behaviour).
Not thread-safe while defining or parsing; reads afterwards are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class Error(Exception):
    """absl.flags.Error: a bad flag definition or value."""


class UnrecognizedFlagError(Error):
    pass


class IllegalFlagValueError(Error):
    pass


@dataclass
class _Flag:
    name: str
    default: Any
    help: str
    parse: Callable[[str], Any]
    is_bool: bool = False
    value: Any = None
    present: bool = False


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "t", "1", "yes", "y"):
        return True
    if lowered in ("false", "f", "0", "no", "n"):
        return False
    raise ValueError(f"Non-boolean argument to boolean flag: {text!r}")


class FlagValues:
    """absl's FlagValues: the registry of defined flags and their parsed values."""

    def __init__(self) -> None:
        self.__dict__["_flags"] = {}
        self.__dict__["_parsed"] = False

    def _define(self, flag: _Flag) -> None:
        if flag.name in self._flags:
            raise Error(f"The flag '{flag.name}' is defined twice.")
        flag.value = flag.default
        self._flags[flag.name] = flag

    def __getattr__(self, name: str) -> Any:
        flags = self.__dict__["_flags"]
        if name not in flags:
            raise AttributeError(name)
        return flags[name].value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._flags:
            raise AttributeError(name)
        self._flags[name].value = value

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def __iter__(self) -> Any:
        return iter(self._flags)

    def __getitem__(self, name: str) -> _Flag:
        return self._flags[name]

    def is_parsed(self) -> bool:
        return bool(self._parsed)

    def mark_as_parsed(self) -> None:
        self.__dict__["_parsed"] = True

    def flag_values_dict(self) -> dict[str, Any]:
        return {name: f.value for name, f in self._flags.items()}

    def __call__(self, argv: list[str], known_only: bool = False) -> list[str]:
        """Parses `--name=value`, `--name value`, `--flag`/`--noflag`; returns argv[0] and
        the arguments that are not flags (after a bare `--`, everything)."""
        rest = [argv[0]] if argv else []
        args = list(argv[1:])
        while args:
            arg = args.pop(0)
            if arg == "--":
                rest.extend(args)
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, eq, text = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not eq:
                flag = self._flags.get(name[2:])
                if flag is not None and flag.is_bool:
                    flag.value, flag.present = False, True
                    continue
                flag = None
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise UnrecognizedFlagError(f"Unknown command line flag '{name}'")
            if not eq:
                if flag.is_bool:
                    flag.value, flag.present = True, True
                    continue
                if not args:
                    raise Error(f"Flag --{name} must have a value other than None.")
                text = args.pop(0)
            try:
                flag.value = flag.parse(text)
            except ValueError as e:
                raise IllegalFlagValueError(f"flag --{name}={text}: {e}") from None
            flag.present = True
        self.mark_as_parsed()
        return rest


FLAGS = FlagValues()


def _definer(parse: Callable[[str], Any], is_bool: bool = False) -> Callable[..., None]:
    def define(
        name: str, default: Any, help: str = "", flag_values: FlagValues = FLAGS, **_: Any
    ) -> None:
        if isinstance(default, str) and parse is not str:
            default = parse(default)
        flag_values._define(_Flag(name, default, help, parse, is_bool))

    return define


DEFINE_string = _definer(str)
DEFINE_integer = _definer(int)
DEFINE_float = _definer(float)
DEFINE_boolean = DEFINE_bool = _definer(_parse_bool, is_bool=True)


def DEFINE_list(
    name: str, default: Any, help: str = "", flag_values: FlagValues = FLAGS, **_: Any
) -> None:
    def parse(text: str) -> list[str]:
        return [s.strip() for s in text.split(",") if s.strip()]

    if isinstance(default, str):
        default = parse(default)
    flag_values._define(_Flag(name, default, help, parse))


def DEFINE_enum(
    name: str,
    default: Any,
    enum_values: list[str],
    help: str = "",
    flag_values: FlagValues = FLAGS,
    **_: Any,
) -> None:
    def parse(text: str) -> str:
        if text not in enum_values:
            raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")
        return text

    flag_values._define(_Flag(name, default, help, parse))
