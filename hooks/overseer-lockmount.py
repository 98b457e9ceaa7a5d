#!/usr/bin/env python3
# Overseer's lock mounts: makes files read-only (or writable again) inside ONE confined child's
# mount namespace, so a file another agent holds cannot be written by any program that child
# runs — not Write, not Bash, not `node -e` (src/confine/lockMounts.ts runs this).
#
#   overseer-lockmount.py <pid in the child's namespaces> ro|rw <absolute path>...
#
# It joins the child's user namespace (when it has one: a non-root hub's children) and mount
# namespace itself, with setns(2), and calls mount(2)/umount2(2) directly: an exec after setns
# would drop the capabilities the user namespace grants, and util-linux's mount refuses callers
# that are not uid 0. The host's mounts are never touched. Exit 0 when every path was done; 3 when
# the process is gone (its namespace went with it: nothing to do); else 1 with one line per failure
# on stderr (the paths that worked stay done). Never a traceback: the hub reads these lines.
import ctypes
import errno
import os
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MNT_DETACH = 1, 32, 4096, 2
libc = ctypes.CDLL(None, use_errno=True)


def fail(what):
    return f"{what}: {os.strerror(ctypes.get_errno())}"


GONE = 3


def gone(pid):
    sys.stderr.write(f"process {pid} is gone: its namespace went with it\n")
    sys.exit(GONE)


def open_ns(pid, kind):
    try:
        return os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY)
    except (FileNotFoundError, ProcessLookupError):
        gone(pid)
    except OSError as e:
        sys.exit(f"open {kind} namespace of {pid}: {e.strerror}")


def enter(pid):
    try:
        theirs = os.stat(f"/proc/{pid}/ns/user").st_ino
    except (FileNotFoundError, ProcessLookupError):
        gone(pid)
    if theirs != os.stat("/proc/self/ns/user").st_ino:
        if libc.setns(open_ns(pid, "user"), CLONE_NEWUSER) != 0:
            sys.exit(fail("setns user"))
    if libc.setns(open_ns(pid, "mnt"), CLONE_NEWNS) != 0:
        sys.exit(fail("setns mnt"))


def main():
    if len(sys.argv) < 4 or sys.argv[2] not in ("ro", "rw"):
        sys.exit("usage: overseer-lockmount.py <pid> ro|rw <path>...")
    enter(sys.argv[1])
    errors = []
    for p in sys.argv[3:]:
        b = p.encode()
        if sys.argv[2] == "ro":
            if libc.mount(b, b, None, MS_BIND, None) != 0:
                errors.append(fail(f"bind {p}"))
            elif libc.mount(None, b, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None) != 0:
                errors.append(fail(f"read-only {p}"))
                libc.umount2(b, MNT_DETACH)
        elif libc.umount2(b, MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
            # EINVAL: not a mount point (already writable); ENOENT: the path is gone. Both: done.
            errors.append(fail(f"unmount {p}"))
    if errors:
        sys.stderr.write("\n".join(errors) + "\n")
        sys.exit(1)


main()
