"""Source roots: directories and archives (``src.zip``, ``*-sources.jar``) holding source files.

A root maps *logical* paths (``java/io/File.java``, ``http/client.py``) to bytes. The
JDK's ``src.zip`` prefixes entries with their module (``java.base/java/io/File.java``);
that prefix is stripped so one lookup rule serves every root.
"""

from __future__ import annotations

import glob
import os
import shutil
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

from perfmodel.embed.source.languages import LANGUAGE_BY_SUFFIX

_SKIP_DIRS = frozenset({"site-packages", "dist-packages", "__pycache__", ".git", "node_modules"})


@dataclass(frozen=True)
class SourceRoot:
    """A named place to read source from; ``name`` is what manifests refer to."""

    name: str
    path: Path

    @property
    def is_archive(self) -> bool:
        return self.path.is_file()

    def describe(self, logical: str, entry: str) -> str:
        """Human-readable location of one file: ``/x/src.zip!java.base/java/io/File.java``."""
        return f"{self.path}!{entry}" if self.is_archive else str(self.path / entry)


def _logical(entry: str) -> str:
    first, sep, rest = entry.partition("/")
    if sep and "." in first and entry.endswith(".java") and not first.endswith(".java"):
        return rest  # JDK module directory: java.base/java/io/File.java
    return entry


class OpenRoot:
    """An opened root: lists its source files once and reads them (keeps archives open)."""

    def __init__(self, root: SourceRoot) -> None:
        self.root = root
        self._zip: zipfile.ZipFile | None = None
        self._entries: dict[str, str] | None = None

    def __enter__(self) -> OpenRoot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
            self._zip = None

    def entries(self) -> dict[str, str]:
        """Logical path -> entry (archive member or path relative to the directory)."""
        if self._entries is None:
            self._entries = {}
            for entry in self._list():
                self._entries.setdefault(_logical(entry), entry)
        return self._entries

    def _list(self) -> list[str]:
        path = self.root.path
        if self.root.is_archive:
            return [
                n
                for n in self._archive().namelist()
                if os.path.splitext(n)[1] in LANGUAGE_BY_SUFFIX
            ]
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(
                d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")
            )
            rel = os.path.relpath(dirpath, path)
            for fn in sorted(filenames):
                if os.path.splitext(fn)[1] in LANGUAGE_BY_SUFFIX:
                    out.append(fn if rel == "." else f"{rel}/{fn}".replace(os.sep, "/"))
        return out

    def _archive(self) -> zipfile.ZipFile:
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.root.path)
        return self._zip

    def read(self, entry: str) -> bytes:
        if self.root.is_archive:
            return self._archive().read(entry)
        return (self.root.path / entry).read_bytes()


def _runtime_jdk_candidates() -> list[Path]:
    """Where the src.zip of the JDK that runs Spark would be: $JAVA_HOME, then ``java``."""
    candidates: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]) / "lib" / "src.zip")
    java = shutil.which("java")
    if java:
        home = Path(os.path.realpath(java)).parent.parent
        candidates += [home / "lib" / "src.zip", home / "src.zip"]
    return candidates


def _first_zip(candidates: list[Path]) -> Path | None:
    for c in candidates:
        if c.is_file() and zipfile.is_zipfile(c):
            return c.resolve()
    return None


def find_runtime_jdk_src_zip() -> Path | None:
    """The ``src.zip`` of the JDK that runs Spark here, or None if that JDK has none.

    Stack frames come from that JDK; another JDK's sources can differ (JDK 17's
    ``java.net.SocketInputStream`` is gone in later releases), so installation checks this.
    """
    return _first_zip(_runtime_jdk_candidates())


def find_jdk_src_zip() -> Path | None:
    """The JDK's ``src.zip``: $JAVA_HOME, then the ``java`` on PATH, then /usr/lib/jvm/*.

    Dangling symlinks (a JDK without its source package) are skipped.
    """
    globbed = [Path(p) for p in sorted(glob.glob("/usr/lib/jvm/*/lib/src.zip"))]
    return _first_zip(_runtime_jdk_candidates() + globbed)


def python_stdlib_dir() -> Path:
    """Source directory of the running interpreter's standard library."""
    return Path(sysconfig.get_paths()["stdlib"])


def site_packages_dirs() -> list[Path]:
    """Site-packages of the running interpreter (its virtualenv, if any)."""
    paths = sysconfig.get_paths()
    out: list[Path] = []
    for key in ("purelib", "platlib"):
        p = Path(paths[key])
        if p.is_dir() and p not in out:
            out.append(p)
    return out


def default_roots() -> list[SourceRoot]:
    """Roots found on this machine: JDK src.zip, Python stdlib, site-packages."""
    roots: list[SourceRoot] = []
    jdk = find_jdk_src_zip()
    if jdk is not None:
        roots.append(SourceRoot("jdk", jdk))
    roots.append(SourceRoot("python-stdlib", python_stdlib_dir()))
    roots.extend(SourceRoot("site-packages", p) for p in site_packages_dirs())
    return roots


def root_from_spec(spec: str) -> SourceRoot:
    """Parse ``NAME=PATH`` or ``PATH`` (named after the file) as given on the command line."""
    name, sep, path = spec.partition("=")
    if not sep:
        path, name = spec, Path(spec).name or spec
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(f"source root {path!r} does not exist")
    if p.is_file() and not zipfile.is_zipfile(p):
        raise ValueError(f"source root {path!r} is neither a directory nor a zip/jar archive")
    return SourceRoot(name, p.resolve())


def module_of(logical: str) -> tuple[str, bool]:
    """Python module name of a logical path, and whether it is a package ``__init__``."""
    stem = logical[: -len(".py")] if logical.endswith(".py") else logical
    parts = stem.split("/")
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def package_of(logical: str) -> str:
    """Java/Scala package implied by a logical path (the file's declaration wins)."""
    return logical.rsplit("/", 1)[0].replace("/", ".") if "/" in logical else ""
