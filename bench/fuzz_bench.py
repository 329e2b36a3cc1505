"""Fuzz the bot port of a live arena: random and mutated frames, both
encodings, many connections.

    python bench/fuzz_bench.py [--frames 100000] [--workers 64] [--seed 1]

Starts an arena server as a subprocess on 127.0.0.1 (open mode, house
bots filling tables at once, so fuzzing connections that say a good hello
get seated and play), then sends ``--frames`` frames over as many
connections as it takes from ``--workers`` concurrent clients. Each
connection picks an encoding, usually says a (possibly broken) hello, and
sends a random run of frames: well-formed messages that are wrong in some
way, random protocol values (floats, bins, deep nesting, huge integers,
lone surrogates), mutations of good frames (bit flips, cuts, splices, bad
length prefixes) and plain random bytes, while reading whatever the server
answers. Reports:

* crashes: the server process exited (goal 0);
* unhandled exceptions in the server's log: lines at level error or above,
  tracebacks, asyncio "Fatal error" reports (goal 0);
* the server's RSS before and after;
* whether a well-behaved bot is served at once afterwards.

``run_fuzz`` is also used with a small budget by the test suite
(tests/reliability) against an in-process server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from protocol.codec import Decoder, Encoding, encode  # noqa: E402

MSGPACK, JSONL = "msgpack", "jsonl"
TYPES = ["hello", "action", "bye", "dance", "", "HELLO", "request", "welcome", "error"]
KEYS = ["type", "protocol", "token", "name", "match", "id", "action", "max_matches", "x", ""]


@dataclass
class FuzzStats:
    frames: int = 0
    connections: int = 0
    refused_connects: int = 0
    server_messages: int = 0
    codes: dict[str, int] = field(default_factory=dict)
    welcomes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"frames_sent": self.frames, "connections": self.connections,
                "refused_connects": self.refused_connects,
                "server_messages": self.server_messages, "welcomes": self.welcomes,
                "error_codes": dict(sorted(self.codes.items()))}


# -- values and frames --------------------------------------------------------------
def random_scalar(rng: random.Random, encoding: str) -> Any:
    pick = rng.randrange(12)
    if pick == 0:
        return rng.choice([0, 1, -1, 2**31, 2**63 - 1, -(2**63), 2**64 - 1])
    if pick == 1:
        return rng.random() * 10 ** rng.randrange(-5, 300)  # floats: not protocol values
    if pick == 2:
        return rng.choice([True, False, None])
    if pick == 3:
        return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(20)))
    if pick == 4 and encoding == MSGPACK:
        return rng.randbytes(rng.randrange(10))  # bin
    if pick == 5 and encoding == MSGPACK:
        return msgpack.ExtType(rng.randrange(128), rng.randbytes(3))
    if pick == 6:
        return rng.choice(["AS", "7H", "enter", "fold", "TH", "", "x" * 300])
    return rng.randrange(-1000, 1000)


def random_value(rng: random.Random, encoding: str, depth: int = 0) -> Any:
    if depth > 4 or rng.random() < 0.5:
        return random_scalar(rng, encoding)
    if rng.random() < 0.5:
        return [random_value(rng, encoding, depth + 1) for _ in range(rng.randrange(5))]
    return {rng.choice(KEYS): random_value(rng, encoding, depth + 1) for _ in range(rng.randrange(5))}


def hello(rng: random.Random, index: int) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "hello", "protocol": 1, "token": f"fuzz-{index}",
                               "name": f"fuzz{index}"}
    if rng.random() < 0.2:  # any key, "type" and "token" included: the hello may break
        message[rng.choice(KEYS)] = random_value(rng, MSGPACK if rng.random() < 0.5 else JSONL)
    if rng.random() < 0.1:
        message["max_matches"] = rng.choice([1, 2, 0, -1, "many"])
    return message


def plausible(rng: random.Random, encoding: str) -> dict[str, Any]:
    """A map shaped like a message, wrong in some way most of the time."""
    kind = rng.choice(TYPES)
    message: dict[str, Any] = {"type": kind} if rng.random() < 0.9 else {}
    if kind == "action" or rng.random() < 0.3:
        message.update(match=rng.choice(["m", "", "20261201-000000-abcdef"]),
                       id=rng.randrange(-2, 50), action=rng.choice(["AS", "enter", [], None, ["7H"]]))
    for _ in range(rng.randrange(3)):
        message[rng.choice(KEYS)] = random_value(rng, encoding)
    return message


def raw_frame(value: Any, encoding: str) -> bytes:
    """Encode anything, unchecked (floats, bins, NaN included)."""
    if encoding == MSGPACK:
        body = msgpack.packb(value, use_bin_type=True)
        return struct.pack(">I", len(body)) + body
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=repr)
    return text.encode("utf-8", "surrogatepass") + b"\n"


def deep(encoding: str, depth: int) -> bytes:
    if encoding == MSGPACK:
        body = b"\x82\xa4type\xa5dance\xa1x" + b"\x91" * depth + b"\xc0"
        return struct.pack(">I", len(body)) + body
    return b'{"type":"dance","x":' + b"[" * depth + b"]" * depth + b"}\n"


def mutate(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(6)
        if not data:
            break
        i = rng.randrange(len(data))
        if op == 0:
            data[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            del data[i:i + rng.randrange(1, 8)]
        elif op == 2:
            data[i:i] = rng.randbytes(rng.randrange(1, 8))
        elif op == 3:
            data = data[:i]
        elif op == 4 and len(data) >= 4:
            data[0:4] = struct.pack(">I", rng.choice([0, 1, 65_536, 65_537, 2**32 - 1,
                                                      rng.randrange(2**32)]))
        else:
            data += data[: rng.randrange(len(data) + 1)]
    return bytes(data)


def wrong_but_harmless(rng: random.Random) -> dict[str, Any]:
    """Messages the server answers and reads past (the connection stays open)."""
    pick = rng.randrange(3)
    if pick == 0:
        return {"type": rng.choice(["dance", "HELLO", "request", "ping", ""]),
                rng.choice(KEYS[1:]): rng.randrange(100)}
    if pick == 1:
        return {"type": "action", "match": rng.choice(["m", "20261201-000000-abcdef"]),
                "id": rng.randrange(-5, 10**6), "action": rng.choice(["AS", "enter", [], None])}
    return {"type": "hello", "protocol": 1, "token": "again"}


def next_frame(rng: random.Random, encoding: str) -> bytes:
    pick = rng.random()
    if pick < 0.9:  # most frames keep the connection open, so more of them are read
        return raw_frame(wrong_but_harmless(rng), encoding)
    pick = rng.random()
    if pick < 0.45:
        return raw_frame(plausible(rng, encoding), encoding)
    if pick < 0.6:
        return raw_frame(random_value(rng, encoding), encoding)
    if pick < 0.8:
        return mutate(rng, raw_frame(plausible(rng, encoding), encoding))
    if pick < 0.85:
        return deep(encoding, rng.choice([30, 31, 33, 200, 990, 5000]))
    if pick < 0.9 and encoding == JSONL:
        return rng.choice([b'{"type":"\\ud800"}\n', b'{"type":"x","n":1e400}\n', b"\n",
                           b'{"type":"x","n":' + b"9" * 5000 + b"}\n", b'{"a":NaN}\n'])
    return rng.randbytes(rng.randrange(1, 200))


# -- the fuzzing clients -----------------------------------------------------------------
async def _read(reader: asyncio.StreamReader, stats: FuzzStats) -> None:
    # The server answers in the encoding the fuzzer's first byte chose (JSON
    # Lines for a first byte that is neither): read it from its first byte.
    decoder: Decoder | None = None
    try:
        while data := await reader.read(65_536):
            if decoder is None:
                decoder = Decoder.for_client(Encoding.JSONL if data[:1] == b"{" else Encoding.MSGPACK)
            for message in decoder.feed(data):
                stats.server_messages += 1
                if message.get("type") == "error":
                    code = str(message.get("code"))
                    stats.codes[code] = stats.codes.get(code, 0) + 1
                elif message.get("type") == "welcome":
                    stats.welcomes += 1
                elif message.get("type") == "request" and isinstance(message.get("legal"), list):
                    pass  # a fuzzer does not play well
    except (ConnectionError, OSError):
        pass
    except Exception as exc:  # the server sent something our own decoder refuses
        raise AssertionError(f"server sent undecodable bytes: {exc}") from exc


async def _connection(port: int, rng: random.Random, index: int, budget: int,
                      stats: FuzzStats) -> int:
    encoding = MSGPACK if rng.random() < 0.5 else JSONL
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        stats.refused_connects += 1
        return 0
    stats.connections += 1
    reading = asyncio.ensure_future(_read(reader, stats))
    sent = 0
    try:
        if rng.random() < 0.9:
            frame = raw_frame(hello(rng, index), encoding)
            writer.write(frame if rng.random() < 0.9 else mutate(rng, frame))
            sent += 1
        while sent < budget and not reading.done():
            # Small bursts: a frame after one that closes the connection is
            # never read, and counts only as sent.
            burst = [next_frame(rng, encoding) for _ in range(min(budget - sent, rng.randrange(1, 5)))]
            writer.write(b"".join(burst))
            sent += len(burst)
            await writer.drain()
            await asyncio.sleep(rng.random() * 0.01)
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
        try:
            await asyncio.wait_for(reading, 2)
        except (TimeoutError, ConnectionError, OSError):
            reading.cancel()
    return sent


async def run_fuzz(port: int, *, frames: int, workers: int, seed: int,
                   progress: bool = False) -> FuzzStats:
    """Send ``frames`` fuzz frames to the bot port at ``port``."""
    stats = FuzzStats()
    master = random.Random(seed)
    counter = iter(range(10**9))

    async def worker(rng: random.Random) -> None:
        while stats.frames < frames:
            budget = min(frames - stats.frames, rng.choice([1, 3, 10, 50, 300]))
            if budget <= 0:
                break
            sent = await _connection(port, rng, next(counter), budget, stats)
            stats.frames += sent  # not `+= await`: that would add to a stale count
            if progress and stats.frames // 10_000 != (stats.frames - sent) // 10_000:
                print(f"{stats.frames} frames, {stats.connections} connections", file=sys.stderr)

    await asyncio.gather(*(worker(random.Random(master.random())) for _ in range(workers)))
    return stats


async def well_behaved_bot_is_served(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0))
    try:
        writer.write(encode({"type": "hello", "protocol": 1, "token": "after-fuzz",
                             "name": "afterfuzz", "max_matches": 1}, Encoding.MSGPACK))
        decoder = Decoder.for_client(Encoding.MSGPACK)
        async with asyncio.timeout(30):
            while data := await reader.read(65_536):
                for message in decoder.feed(data):
                    if message["type"] == "request":
                        writer.write(encode({"type": "action", "match": message["match"],
                                             "id": message["id"], "action": message["legal"][0]},
                                            Encoding.MSGPACK))
                    elif message["type"] == "match_end":
                        return True
        return False
    finally:
        writer.close()


# -- the server under test (subprocess) ----------------------------------------------------
FUZZ_LIMITS: dict[str, Any] = dict(
    max_connections=4000, max_connections_per_address=1024,
    auth_failures_per_minute=10**9,  # fuzz names conflict on purpose; keep every hello checked
    decision_ms=200, bank_ms=0, house_wait_s=0.0, close_linger_s=0.5)


def serve(port_file: str, db: str, metrics_file: str) -> None:
    from arena.logs import configure_logging
    from arena.server.config import ServerConfig
    from arena.server.server import ArenaServer
    from arena.storage.sqlite import SqliteStore

    configure_logging("info", json=True)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)  # asyncio's own reports

    async def main() -> None:
        config = ServerConfig(port=0, http_port=None, db=db, open=True, **FUZZ_LIMITS)
        store = SqliteStore(db)
        server = ArenaServer(config, store)
        await server.start()
        Path(port_file).write_text(str(server.port))
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await stop.wait()
        Path(metrics_file).write_text(json.dumps(server.metrics.snapshot()))
        await server.stop()
        store.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def scan_log(log_text: str) -> tuple[list[str], dict[str, int]]:
    """(lines reporting an unhandled exception, error-level events by name)."""
    exceptions: list[str] = []
    errors: dict[str, int] = {}
    for line in log_text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            if "Traceback" in line or "Fatal error" in line or line.startswith("ERROR"):
                exceptions.append(line)
            continue
        if "exception" in entry:
            exceptions.append(line)
        elif entry.get("level") in ("error", "critical"):
            event = str(entry.get("event"))
            errors[event] = errors.get(event, 0) + 1
    return exceptions, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", nargs=3, metavar=("PORT_FILE", "DB", "METRICS_FILE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        return
    with tempfile.TemporaryDirectory() as tmp:
        port_file, log_path = Path(tmp) / "port", Path(tmp) / "server.log"
        with log_path.open("w") as log_file:
            metrics_file = Path(tmp) / "metrics.json"
            proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file),
                                     str(Path(tmp) / "fuzz.db"), str(metrics_file)], stderr=log_file,
                                    stdout=subprocess.DEVNULL, cwd=str(HERE.parent))
            try:
                deadline = time.monotonic() + 20
                while not port_file.exists() or not port_file.read_text():
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise SystemExit("the server did not start")
                    time.sleep(0.05)
                port = int(port_file.read_text())
                rss_before = rss_kib(proc.pid)
                samples: list[int] = []
                sampling = threading.Event()

                def sample() -> None:  # RSS every 2 s: does it level off?
                    while not sampling.wait(2):
                        samples.append(rss_kib(proc.pid))

                sampler = threading.Thread(target=sample, daemon=True)
                sampler.start()
                t0 = time.monotonic()
                stats = asyncio.run(run_fuzz(port, frames=args.frames, workers=args.workers,
                                             seed=args.seed, progress=True))
                elapsed = time.monotonic() - t0
                sampling.set()
                alive = proc.poll() is None
                rss_after = rss_kib(proc.pid) if alive else -1
                served = alive and asyncio.run(well_behaved_bot_is_served(port))
            finally:
                proc.terminate()
                proc.wait(10)
        bad, errors = scan_log(log_path.read_text())
        metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    # What the server itself read: decoded messages plus refused frames (a
    # frame sent after one that closed its connection is never read).
    read = metrics.get("messages_total", 0) + metrics.get("frames_refused_total", 0)
    report = {**stats.to_dict(), "frames_read_by_server": read,
              "server_errors_total": metrics.get("errors_total"),
              "seconds": round(elapsed, 1), "crashes": 0 if alive else 1,
              "unhandled_exceptions": len(bad), "error_log_events": errors,
              "rss_kib_before": rss_before, "rss_kib_after": rss_after,
              "rss_kib_samples": samples,
              "bot_served_after": served}
    print(json.dumps(report, indent=2))
    for line in bad[:10]:
        print("UNHANDLED:", line[:400], file=sys.stderr)
    if not alive or bad or not served:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
