"""The games as PettingZoo AEC environments, for learning offline.

An optional part: ``pip install 'muushig-arena[rl]'`` brings PettingZoo,
Gymnasium and NumPy. ``arena.envs.muushig.env()`` and
``arena.envs.thirteen.env()`` play matches through the same engines, rule
options and per-seat views as the server; :mod:`arena.envs.policy_bot`
runs a policy of these environments as a protocol bot. docs/envs.md
describes observations, actions and rewards.
"""

from __future__ import annotations

try:
    import gymnasium  # noqa: F401
    import numpy  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        f"arena.envs needs the optional 'rl' extra ({exc.name} is missing): "
        "pip install 'muushig-arena[rl]' (or pip install -e '.[rl]' in a checkout)"
    ) from exc
