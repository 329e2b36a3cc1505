"""Time in the tests that need the real clock, in one scalable unit.

Most timing rules are tested on a fake clock (the match session, the bot
link). The few tests that must watch a real deadline go by or a real
server answer in time state their bounds in :data:`MS`, which
``ARENA_TESTS_TIMEOUT_FACTOR`` (default 1) stretches on a slow or loaded
machine, as websockets' tests do. A bound here only tells a behaviour from
its alternative (an answer now, not after a 15 s heartbeat); how fast the
server is, is measured in ``bench/``.
"""

from __future__ import annotations

import os

FACTOR = float(os.environ.get("ARENA_TESTS_TIMEOUT_FACTOR", "1"))

# One millisecond, stretched by FACTOR: an upper bound of ``500 * MS``
# seconds reads "well under the 15 s the other behaviour would take".
MS = 0.001 * FACTOR
