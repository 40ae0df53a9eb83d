"""Errors a user can cause, each naming the config path, what is wrong and what would be right."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem in a config: where it is and what to do about it."""

    path: str
    message: str
    source: str | None = None
    line: int | None = None
    after: tuple[str, ...] = ()
    """Config paths (`jobs[*].nodePool`, `[*]` for any index) whose mistakes this issue may only echo: a value it
    judges was derived from them (a pool's size from the jobs that name it). When one of them has an issue of its
    own, this one is dropped, so the first line a user reads names the mistake they made."""

    def __str__(self) -> str:
        where = (
            f"{self.source}:{self.line}: " if self.source and self.line else (f"{self.source}: " if self.source else "")
        )
        return f"{where}{self.path}: {self.message}" if self.path else f"{where}{self.message}"


class ConfigError(ValueError):
    """A configuration mistake; its message lists every issue found, one per line."""

    def __init__(self, issues: Iterable[Issue] | Issue | str, path: str = "") -> None:
        if isinstance(issues, str):
            issues = [Issue(path, issues)]
        elif isinstance(issues, Issue):
            issues = [issues]
        self.issues: tuple[Issue, ...] = without_echoes(issues)
        super().__init__("\n".join(str(i) for i in self.issues))

    def located(self, source: str, lines: Mapping[str, int]) -> ConfigError:
        """The same issues, each annotated with the file and the line of its path when known (an issue already
        located, in a job file, keeps its place)."""
        return ConfigError(
            i if i.source else replace(i, source=source, line=_line_of(i.path, lines)) for i in self.issues
        )


def without_echoes(issues: Iterable[Issue]) -> tuple[Issue, ...]:
    """The issues less those that only echo another's mistake: an issue whose `after` paths have an issue of their
    own. The rest keep their order."""
    issues = tuple(issues)
    if not any(i.after for i in issues):
        return issues
    paths = [i.path for i in issues]
    return tuple(i for i in issues if not any(_covers(a, p) for a in i.after for p in paths if p != i.path))


def _covers(pattern: str, path: str) -> bool:
    """Whether a config path is at or under `pattern` (`[*]` matching any index)."""
    regex = _PATTERNS.get(pattern)
    if regex is None:
        regex = _PATTERNS[pattern] = re.compile(re.escape(pattern).replace(r"\[\*\]", r"\[\d+\]") + r"(?:[.\[]|$)")
    return regex.match(path) is not None


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _line_of(path: str, lines: Mapping[str, int]) -> int | None:
    """The line of the longest known prefix of a config path (of the whole config, "", when none is known)."""
    probe = path
    while probe:
        if probe in lines:
            return lines[probe]
        cut = max(probe.rfind("."), probe.rfind("["))
        probe = probe[:cut] if cut > 0 else ""
    return lines.get("")


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """`did you mean 'x'? ` for the choice closest to a mistyped value, or nothing."""
    close = difflib.get_close_matches(value, list(choices), n=1)
    return f"did you mean '{close[0]}'? " if close else ""


def join_path(*parts: str | int) -> str:
    """A config path such as `nodePools[1].maxNodes` from its parts."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part:
            out = f"{out}.{part}" if out else part
    return out
