"""The image's minimal root file system, copied out of a Debian system that has Python installed.

Run as ``python3 make-rootfs.py DEST`` in the Dockerfile's ``rootfs`` stage. It copies the files of
Python's packages and of the packages they depend on (dpkg's own lists, Depends and Pre-Depends
followed), except the packages in ``LEFT_OUT``: shells, coreutils, perl, dpkg and apt, and the
libraries only the stdlib modules cronctl never imports link (curses, readline, dbm, sqlite3, nis).
It writes Debian's record of exactly the packages copied to ``/var/lib/dpkg/status`` (scanners and
the SBOM read it), the CA bundle, ``/etc/passwd`` and ``/etc/group`` with the image's user (10001),
compiles the stdlib (a read-only root file system cannot cache bytecode) and runs ``ldconfig``.
Standard library only: it runs on the Debian stage's Python.
"""

from __future__ import annotations

import compileall
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOTS = ("python3-minimal", "python3.11", "ca-certificates", "base-files")
LEFT_OUT = frozenset({
    "dpkg", "apt", "debconf", "perl-base", "bash", "dash", "coreutils", "debianutils", "sensible-utils",
    "openssl", "mawk", "tzdata",  # zones come from the tzdata wheel, which the operator's tests run on
    "libdb5.3", "libncursesw6", "libtinfo6", "libreadline8", "readline-common", "libsqlite3-0",
    "libnsl2", "libtirpc3", "libtirpc-common", "libgssapi-krb5-2", "libkrb5-3", "libk5crypto3",
    "libkrb5support0", "libkeyutils1", "libcom-err2",
})
SKIPPED_PATHS = re.compile(
    r"^/usr/share/(doc|man|info|locale|lintian|bug|menu|pixmaps|applications|debconf)(/|$)"
    r"|^/etc/(update-motd\.d|profile|bash\.bashrc)(/|$)"  # shell scripts, and no shell to run them
    r"|^/usr/lib/x86_64-linux-gnu/gconv(/|$)"  # iconv's charsets: Python has its own codecs
    r"|^/usr/s?bin/(?!python3(\.\d+)?$)"  # no program but Python (pydoc, update-ca-certificates, ldconfig...)
    r"|^/usr/lib/python3\.\d+/(lib2to3|pydoc_data|ensurepip|idlelib|tkinter|turtledemo|test)(/|$)"
)
USERS = "root:x:0:0:root:/root:/nonexistent\ncronctl:x:10001:10001:cronctl:/nonexistent:/nonexistent\n"
GROUPS = "root:x:0:\ncronctl:x:10001:\n"


def stanzas(status: str) -> dict[str, str]:
    """dpkg's status file, the installed packages' stanzas by name."""
    found = {}
    for stanza in status.strip().split("\n\n"):
        fields = dict(re.findall(r"^([\w-]+): ?(.*)$", stanza, re.M))
        if "install ok installed" in fields.get("Status", ""):
            found[fields["Package"]] = stanza
    return found


def depends_of(stanza: str) -> list[list[str]]:
    """Each Depends and Pre-Depends entry as its alternatives' package names."""
    entries = []
    for field in re.findall(r"^(?:Pre-)?Depends: (.*)$", stanza, re.M):
        for entry in field.split(","):
            entries.append([re.sub(r"[:\s(].*", "", choice.strip()) for choice in entry.split("|")])
    return entries


def closure(installed: dict[str, str], roots: tuple[str, ...], left_out: frozenset[str]) -> list[str]:
    """The packages to copy: the roots and what they depend on, the first installed alternative of
    each entry (a virtual name resolved through Provides), none of ``left_out``."""
    provides = {}
    for name, stanza in installed.items():
        for field in re.findall(r"^Provides: (.*)$", stanza, re.M):
            for provided in field.split(","):
                provides.setdefault(re.sub(r"[:\s(].*", "", provided.strip()), name)
    chosen, pending = set(), list(roots)
    while pending:
        name = pending.pop()
        if name in chosen or name in left_out:
            continue
        chosen.add(name)
        for alternatives in depends_of(installed[name]):
            real = [provides.get(a, a) for a in alternatives]
            pending += [next((a for a in real if a in installed), real[0])]
    return sorted(chosen)


def files_of(package: str) -> list[str]:
    for name in (package, f"{package}:amd64", f"{package}:arm64"):
        listed = Path(f"/var/lib/dpkg/info/{name}.list")
        if listed.is_file():
            return listed.read_text().split("\n")
    raise SystemExit(f"make-rootfs: no file list for {package}")


def copy_path(path: str, dest: Path) -> None:
    """One file or symlink, at its place with the directories above it resolved (merged /usr)."""
    source = Path(path)
    if not path or SKIPPED_PATHS.search(path) or not os.path.lexists(source) or source.is_dir():
        return
    if source.is_symlink() and source.resolve().is_dir():
        return
    real = Path(os.path.realpath(source.parent)) / source.name
    target = dest / real.relative_to("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(target):
        return
    if real.is_symlink():
        target.symlink_to(os.readlink(real))
    else:
        shutil.copy2(real, target)


def copy_top_level_links(dest: Path) -> None:
    """/bin, /lib, /lib64, /sbin as links into /usr where the system has them (the loader's path
    /lib64/ld-linux-x86-64.so.2 goes through one)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        if Path(f"/{name}").is_symlink():
            (dest / name).symlink_to(os.readlink(f"/{name}"))


def write_system_files(dest: Path, packages: list[str], installed: dict[str, str]) -> None:
    etc = dest / "etc"
    (etc / "ssl" / "certs").mkdir(parents=True, exist_ok=True)
    shutil.copyfile("/etc/ssl/certs/ca-certificates.crt", etc / "ssl" / "certs" / "ca-certificates.crt")
    openssl_dir = dest / "usr" / "lib" / "ssl"
    openssl_dir.mkdir(parents=True, exist_ok=True)
    (openssl_dir / "certs").symlink_to("/etc/ssl/certs")
    (openssl_dir / "cert.pem").symlink_to("/etc/ssl/certs/ca-certificates.crt")
    (etc / "passwd").write_text(USERS)
    (etc / "group").write_text(GROUPS)
    if Path("/etc/nsswitch.conf").is_file():
        shutil.copyfile("/etc/nsswitch.conf", etc / "nsswitch.conf")
    (etc / "ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    status = dest / "var" / "lib" / "dpkg" / "status"
    status.parent.mkdir(parents=True, exist_ok=True)
    status.write_text("\n\n".join(installed[name] for name in packages) + "\n")
    tmp = dest / "tmp"
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o1777)


def main(dest: Path) -> None:
    installed = stanzas(Path("/var/lib/dpkg/status").read_text())
    packages = closure(installed, ROOTS, LEFT_OUT)
    copy_top_level_links(dest)
    for package in packages:
        for path in files_of(package):
            copy_path(path, dest)
    write_system_files(dest, packages, installed)
    for stdlib in sorted((dest / "usr" / "lib").glob("python3.*")):
        compileall.compile_dir(stdlib, quiet=1, workers=0, stripdir=str(dest), prependdir="/")
    if shutil.which("ldconfig"):
        subprocess.run(["ldconfig", "-r", str(dest)], check=True)
    print(f"make-rootfs: {len(packages)} packages: {' '.join(packages)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
