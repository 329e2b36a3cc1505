"""Checking the deals of a match: at its ``match_end``, or later for a sealed one.

A match of a duplicate tournament whose decks later matches deal again ends
with ``match_end.reveal_deferred`` and an empty reveal (protocol §6). Its
commitments are kept here until the ``reveal`` message for it arrives, and
checked then; ``MatchInfo.deal_problems`` stays None until they are.
"""

from __future__ import annotations

import structlog

from protocol.deals import verify_reveal
from protocol.messages import MatchEnd, Reveal
from protocol.sdk.matches import MatchInfo

log = structlog.get_logger("protocol.sdk")

KEPT = 1000  # sealed matches whose commitments wait for their reveal


class DealChecks:
    """Verifies each match's reveal against the commitments it received."""

    def __init__(self, kept: int = KEPT) -> None:
        self.kept = kept
        self.awaiting: dict[str, MatchInfo] = {}

    def ended(self, info: MatchInfo, message: MatchEnd) -> None:
        if message.reveal_deferred:
            info.deal_problems = None
            if len(self.awaiting) >= self.kept:
                oldest = next(iter(self.awaiting))
                log.warning("too many matches wait for their reveal; forgetting the oldest",
                            match=oldest)
                del self.awaiting[oldest]
            self.awaiting[message.match] = info
            return
        self._check(info, message.reveal)

    def revealed(self, message: Reveal) -> MatchInfo:
        """The match's info, its deals checked. A reveal of a match this
        client did not keep (played on another connection, or forgotten) is
        logged and gets a fresh info with ``deal_problems`` None."""
        info = self.awaiting.pop(message.match, None)
        if info is None:
            log.warning("reveal of a match whose commitments this client did not keep",
                        match=message.match)
            return MatchInfo(message.match)
        self._check(info, message.reveal)
        if not info.deal_problems:
            log.info("deferred reveal checked", match=message.match, deals=len(message.reveal))
        return info

    def _check(self, info: MatchInfo, reveal: list) -> None:
        info.deal_problems = verify_reveal(info.commits, reveal, require_all=False)
        if info.deal_problems:
            log.warning("deal verification failed", match=info.match, problems=info.deal_problems)
