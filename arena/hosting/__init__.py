"""Hosted bots: code submitted to the arena, built and run in a sandbox.

A bot author uploads a single source file or an archive; every upload is a
new *version* of that bot. The arena unpacks it safely (:mod:`.archive`),
builds it with its language preset (:mod:`.presets`, :mod:`.builder`) inside
a sandbox (:mod:`.sandbox`), and from then on starts it for matches like a
remote bot that happens to live on this machine (:mod:`.hosted`): inside its
sandbox the bot speaks plain TCP to ``127.0.0.1``, and a relay
(:mod:`.relay`) carries the bytes over a Unix socket to the arena's bot port.
Nothing else is reachable from inside. The ladder (:mod:`.ladder`) keeps
ready hosted bots playing.
"""

from arena.hosting.errors import ArchiveError, BuildError, HostingError, SandboxError

__all__ = ["ArchiveError", "BuildError", "HostingError", "SandboxError"]
