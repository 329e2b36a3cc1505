"""The parent's metrics under ``arena serve --workers N``: its own server's
counters plus the last snapshot each worker sent (every half second), so
``/api/health`` and ``/metrics`` show the sums, and the health JSON lists
each worker too."""

from __future__ import annotations

from typing import Any

from arena.metrics import Metrics

# Counters and gauges summed over the processes ("uptime_s" is the parent's).
SUMMED = ("tables_running", "bots_connected", "decisions_total", "timeouts_total",
          "illegal_total", "messages_total", "frames_refused_total",
          "matches_finished_total", "matches_aborted_total")


class CombinedMetrics(Metrics):
    """The parent server's :class:`Metrics`, reported with its workers'.

    A worker's counters restart from zero when the worker is restarted;
    ``retired`` keeps what the dead ones had counted, so the sums never go
    down (Prometheus counters must not)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.workers: dict[int, dict[str, Any]] = {}  # index -> last snapshot and process info
        self.retired: dict[str, int] = {name: 0 for name in SUMMED if name.endswith("_total")}
        self.retired_errors: dict[str, int] = {}

    def worker_report(self, index: int, snapshot: dict[str, Any], info: dict[str, Any]) -> None:
        self.workers[index] = {**info, "metrics": snapshot}

    def worker_gone(self, index: int) -> None:
        """A worker died or stopped: its counters join the retired sums."""
        entry = self.workers.pop(index, None)
        if entry is None:
            return
        snapshot = entry["metrics"]
        for name in self.retired:
            self.retired[name] += int(snapshot.get(name, 0))
        for code, count in snapshot.get("errors_total", {}).items():
            self.retired_errors[code] = self.retired_errors.get(code, 0) + int(count)

    def _sum(self, name: str) -> int:
        total = int(getattr(self, name)) + self.retired.get(name, 0)
        return total + sum(int(w["metrics"].get(name, 0)) for w in self.workers.values())

    def _errors(self) -> dict[str, int]:
        errors = dict(self.errors_total)
        for source in [self.retired_errors, *(w["metrics"].get("errors_total", {})
                                              for w in self.workers.values())]:
            for code, count in source.items():
                errors[code] = errors.get(code, 0) + int(count)
        return dict(sorted(errors.items()))

    def combined_rate(self) -> float:
        return Metrics.decisions_per_second(self) + sum(
            float(w["metrics"].get("decisions_per_second", 0.0)) for w in self.workers.values())

    def snapshot(self) -> dict[str, Any]:
        own = super().snapshot()
        summed = {**own, **{name: self._sum(name) for name in SUMMED},
                  "decisions_per_second": round(self.combined_rate(), 3),
                  "errors_total": self._errors()}
        summed["workers"] = [{"worker": index, **{k: v for k, v in entry.items()
                                                   if k != "metrics"},
                              **{name: entry["metrics"].get(name) for name in
                                 ("tables_running", "bots_connected", "decisions_total",
                                  "decisions_per_second")}}
                             for index, entry in sorted(self.workers.items())]
        summed["parent"] = {name: own[name] for name in
                            ("tables_running", "bots_connected", "decisions_total")}
        return summed

    def render_prometheus(self, node: str | None = None) -> str:
        view = Metrics(prefix=self.prefix)
        for name in SUMMED:
            setattr(view, name, self._sum(name))
        view.errors_total = self._errors()
        rate = self.combined_rate()
        view.decisions_per_second = lambda: rate  # type: ignore[method-assign]
        view.uptime_s = self.uptime_s  # type: ignore[method-assign]
        p = self.prefix
        lines = [f"# HELP {p}_worker_decisions_total Decisions of each worker process "
                 "since it started.", f"# TYPE {p}_worker_decisions_total counter"]
        lines += [f'{p}_worker_decisions_total{{worker="{index}"}} '
                  f'{int(entry["metrics"].get("decisions_total", 0))}'
                  for index, entry in sorted(self.workers.items())]
        lines += [f"# HELP {p}_workers_up Worker processes serving bots.",
                  f"# TYPE {p}_workers_up gauge", f"{p}_workers_up {len(self.workers)}"]
        return view.render_prometheus(node) + "\n".join(lines) + "\n"
