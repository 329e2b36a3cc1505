"""The bench fuzzer (bench/fuzz_bench.py) with a small budget, against an
in-process arena: no exception escapes a handler, every connection is
answered, and afterwards the three soundness checks hold."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

import structlog

from tests.reliability.soundness import assert_sound

BENCH = Path(__file__).resolve().parents[2] / "bench" / "fuzz_bench.py"


def load_fuzzer() -> Any:
    spec = importlib.util.spec_from_file_location("fuzz_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_bench"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


async def test_a_small_fuzz_run_breaks_nothing(arena):
    fuzz = load_fuzzer()
    server = await arena(**{k: v for k, v in fuzz.FUZZ_LIMITS.items() if k != "close_linger_s"})
    loop = asyncio.get_running_loop()
    loop_errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: loop_errors.append(context))
    try:
        with structlog.testing.capture_logs() as logs:
            stats = await fuzz.run_fuzz(server.port, frames=1500, workers=16, seed=7)
    finally:
        loop.set_exception_handler(previous)
    assert stats.frames >= 1500 and stats.connections >= 100
    assert {"malformed", "frame_too_large", "unknown_type"} <= set(stats.codes)
    raised = [entry for entry in logs if "exc_info" in entry or "exception" in entry]
    assert raised == [], raised[:3]
    assert loop_errors == [], loop_errors[:3]
    await assert_sound(server)
