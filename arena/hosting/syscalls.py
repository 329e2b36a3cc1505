"""The sandbox's syscall filter (seccomp), handed to bubblewrap as BPF.

Everything a bot's runtime needs stays allowed (the filter's default); what
is refused is what only an escape attempt wants:

* a nested **user namespace** (``unshare``/``clone`` with ``CLONE_NEWUSER``):
  inside one a bot is uid 0 with every capability, which widens the kernel
  surface it can reach; ``clone3`` answers ``ENOSYS`` because its flags
  cannot be inspected, and C libraries then fall back to ``clone``;
* joining namespaces, mounting, kernel keyrings, BPF, perf events,
  ``userfaultfd``, kernel modules and ``kexec``, swap, reboot, raw I/O ports,
  file handles that bypass paths (``open_by_handle_at``).

The BPF program is built with libseccomp (through ``pyseccomp``) once per
process; its native architecture is checked by the filter, others are killed.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile

from arena.hosting.errors import SandboxError

CLONE_NEWUSER = 0x10000000
REFUSED = ("setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
           "fsopen", "fsmount", "fspick", "keyctl", "add_key", "request_key", "bpf",
           "perf_event_open", "userfaultfd", "init_module", "finit_module", "delete_module",
           "kexec_load", "kexec_file_load", "swapon", "swapoff", "reboot", "iopl", "ioperm",
           "open_by_handle_at", "name_to_handle_at", "quotactl", "acct", "syslog")


@functools.cache
def filter_bpf() -> bytes:
    """The compiled filter (raises :class:`SandboxError` without libseccomp)."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:
        raise SandboxError(f"the sandbox's syscall filter needs libseccomp "
                           f"(apt-get install libseccomp2) and pyseccomp: {exc}") from None
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    refuse = seccomp.ERRNO(errno.EPERM)
    for call in ("unshare", "clone"):  # arg 0 holds the flags of both on x86-64 and arm64
        rules.add_rule(refuse, call, seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER,
                                                 CLONE_NEWUSER))
    for call in REFUSED:
        try:
            rules.add_rule(refuse, call)
        except (RuntimeError, ValueError, OSError):
            pass  # not a syscall on this architecture
    try:
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    except (RuntimeError, ValueError, OSError):
        pass
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def filter_fd() -> int:
    """A file descriptor bubblewrap reads the filter from (``--seccomp FD``);
    the caller closes it once bubblewrap has started."""
    program = filter_bpf()
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)  # a few hundred bytes: fits the pipe's buffer
    finally:
        os.close(write_end)
    return read_end
