"""PettingZoo's order-enforcing wrapper, with its per-step reads direct.

``env()`` wraps an environment in PettingZoo's ``OrderEnforcingWrapper``
(errors for use before ``reset``, a warning for a step after the end), as
PettingZoo's own environments do. That wrapper forwards every attribute
through ``__getattr__``, which Python reaches only after the ordinary
look-up has failed: ``last()`` and the agent iterator read six such
attributes a step, and the wrapper cost as much as the whole environment
step behind it. Here the attributes read every step are properties that
make the same check, and ``last()`` is the environment's own; every other
rule of the wrapper is PettingZoo's, unchanged.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.wrappers import OrderEnforcingWrapper

# The names OrderEnforcingWrapper refuses before reset().
_BEFORE_RESET = ("rewards", "terminations", "truncations", "infos", "agent_selection", "agents")


def _forwarded(name: str) -> property:
    def read(self: OrderEnforcing) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(read, doc=f"The environment's ``{name}`` (after reset).")


class OrderEnforcing(OrderEnforcingWrapper):
    """``OrderEnforcingWrapper`` whose per-step reads skip ``__getattr__``."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)


for _name in _BEFORE_RESET:
    setattr(OrderEnforcing, _name, _forwarded(_name))
