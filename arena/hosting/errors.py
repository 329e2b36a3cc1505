"""What can go wrong with a hosted bot, as one small tree.

::

    HostingError
    ├── ArchiveError     the upload is refused (traversal, links, size, format)
    ├── BuildError       the bot could not be built (its log says why)
    ├── SandboxError     the sandbox cannot be set up on this machine
    ├── SeatTakenError   the bot plays a match on another node of the store now
    └── HostingSettingsError  an organiser's hosting setting is out of range
"""

from __future__ import annotations


class HostingError(Exception):
    """Base of every hosted-bot error."""


class ArchiveError(HostingError):
    """An uploaded file or archive is refused; the message says why."""


class BuildError(HostingError):
    """A version failed to build."""


class SandboxError(HostingError):
    """The sandbox cannot run here (bubblewrap missing, limits unavailable)."""


class SeatTakenError(HostingError):
    """A hosted bot is seated at a table on another node of the store (it
    plays one match at a time); it can be seated here once that one ends."""


class HostingSettingsError(HostingError, ValueError):
    """A hosting setting an organiser gave cannot work; the message says
    which and what range it must be in."""
