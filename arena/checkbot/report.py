"""The checker's verdicts and how they are printed."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Verdict(StrEnum):
    PASS = "pass"
    WARN = "warn"  # passed, but the bot loses something by it (e.g. a fouled arrangement)
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    verdict: Verdict
    message: str

    @property
    def passed(self) -> bool:
        return self.verdict is not Verdict.FAIL


@dataclass
class Report:
    """Every check in the order it ran, plus what the bot wrote to stderr."""

    results: list[CheckResult] = field(default_factory=list)
    encoding: str | None = None
    bot_exit_code: int | None = None
    stderr_tail: list[str] = field(default_factory=list)
    port: int | None = None  # where the checker listened

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.passed)

    @property
    def warned(self) -> int:
        return sum(1 for r in self.results if r.verdict is Verdict.WARN)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        return bool(self.results) and self.failed == 0

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    def result(self, name: str) -> CheckResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check named {name!r}; checks: {', '.join(r.name for r in self.results)}")

    def failed_names(self) -> list[str]:
        return [r.name for r in self.results if not r.passed]

    def warned_names(self) -> list[str]:
        return [r.name for r in self.results if r.verdict is Verdict.WARN]

    def to_json(self) -> dict[str, object]:
        """Everything the text report says, for CI."""
        return {
            "ok": self.ok,
            "passed": self.passed,
            "failed": self.failed,
            "warned": self.warned,
            "checks": [{"name": r.name, "passed": r.passed, "verdict": str(r.verdict), "message": r.message}
                       for r in self.results],
            "encoding": self.encoding,
            "port": self.port,
            "bot_exit_code": self.bot_exit_code,
            "stderr_tail": self.stderr_tail,
        }

    def render(self, *, symbols: bool) -> str:
        """One line per check; ✔/!/✘ for a terminal, PASS/WARN/FAIL otherwise."""
        mark = {Verdict.PASS: "✔" if symbols else "PASS", Verdict.WARN: "!" if symbols else "WARN",
                Verdict.FAIL: "✘" if symbols else "FAIL"}
        width = max((len(r.name) for r in self.results), default=0)
        lines = [f"{mark[r.verdict]} {r.name.ljust(width)}  {r.message}" for r in self.results]
        if self.failed and self.stderr_tail:
            lines.append("")
            lines.append("last lines the bot wrote to stderr:")
            lines.extend(f"  | {line}" for line in self.stderr_tail)
        lines.append("")
        summary = f"{self.passed} passed, {self.failed} failed"
        if self.warned:
            summary += f" ({self.warned} of the passed with a warning)"
        lines.append(summary)
        return "\n".join(lines)
