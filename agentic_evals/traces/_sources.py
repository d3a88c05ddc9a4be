"""The files `load_traces` reads: sources (files, directories, glob patterns) expanded, safely.

Directories are walked without recursion, following symbolic links but entering each directory
(by device and inode) once, so a link loop is skipped with a warning instead of walking forever;
`**` patterns are matched along the same walk (Python's own recursive glob follows loops).
Hidden entries and dataset or note files (by suffix) are skipped without a word, as documented;
broken links and entries that are not regular files (a FIFO would block) with a warning. A path
the system refuses (too long, a NUL character, a link loop) is a one-line `FileError`.

A file named twice, by path or through a link, is read once, where it first appears. Each file
comes with `found`: True when a walk or pattern found it, so a stray non-trace file there is
skipped with a warning, while a file named on its own that is not a trace is an error.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import FileError, os_reason

_GLOB_CHARACTERS = frozenset('*?[')
_NOT_TRACES = frozenset(
    {
        '.md',
        '.rst',
        '.py',
        '.yaml',
        '.yml',
        '.toml',
        '.ini',
        '.cfg',
        '.csv',
        '.html',
        '.xml',
        '.js',
        '.mjs',
        '.cjs',
        '.ts',
    }
)
"""Suffixes of files skipped inside directories (datasets, notes and the scripts that wrote the
traces often sit next to them)."""
_NOT_TRACE_NAMES = ('package.json', 'package-lock.json', 'tsconfig.json', 'requirements*.txt')
"""Package manifests skipped inside directories, by name (a project's own files beside its traces)."""
_NOT_TRACE_DIRECTORIES = frozenset({'node_modules', '__pycache__'})
"""Directories never walked into: installed packages and caches, never traces."""

Warn = Callable[[str], None]


def _stat(path: Path) -> os.stat_result | None:
    """`os.stat`, None when nothing is there; a path the system refuses is a `FileError`."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except ValueError:
        raise FileError(path, 'not a usable path (it holds a NUL character)') from None
    except OSError as error:
        raise FileError(path, f'cannot read: {os_reason(error)}') from None


def _walk(directory: Path, warn: Warn) -> list[tuple[Path, bool]]:
    """(path, is a directory) of every non-hidden entry below `directory`, sorted.

    Depth first, each directory's entries in name order, so which of two paths to one directory
    is walked (the other is skipped without a word: its files are read) does not depend on the
    file system's listing order. A link back to a directory being walked is a loop: a warning.
    """
    found: list[tuple[Path, bool]] = []
    top = _stat(directory)
    visited = {(top.st_dev, top.st_ino)} if top is not None else set()
    pending: list[tuple[Path, frozenset[tuple[int, int]]]] = [(directory, frozenset(visited))]
    while pending:
        current, ancestors = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError as error:
            raise FileError(current, f'cannot list this directory: {os_reason(error)}') from None
        below: list[tuple[Path, frozenset[tuple[int, int]]]] = []
        for entry in entries:
            if entry.name.startswith('.') or entry.name in _NOT_TRACE_DIRECTORIES:
                continue
            path = Path(entry.path)
            try:
                info = entry.stat()
            except OSError:
                warn(f'{path}: skipped: a broken symbolic link (or a link loop)')
                continue
            if stat.S_ISDIR(info.st_mode):
                identity = (info.st_dev, info.st_ino)
                if identity in ancestors:
                    warn(f'{path}: skipped: a symbolic link loop (it leads back to a directory above it)')
                elif identity not in visited:
                    visited.add(identity)
                    below.append((path, ancestors | {identity}))
                    found.append((path, True))
            elif stat.S_ISREG(info.st_mode):
                found.append((path, False))
            else:
                warn(f'{path}: skipped: not a regular file')
        pending.extend(reversed(below))
    return sorted(found)


def _directory_files(directory: Path, warn: Warn) -> list[Path]:
    return [path for path, is_dir in _walk(directory, warn) if not is_dir and not _project_file(path)]


def _project_file(path: Path) -> bool:
    """Whether a file found by a walk is one of the project files that sit beside traces (skipped silently)."""
    return path.suffix.lower() in _NOT_TRACES or any(fnmatch.fnmatch(path.name, name) for name in _NOT_TRACE_NAMES)


def _accepts(parts: tuple[str, ...], pattern: tuple[str, ...]) -> tuple[bool, bool]:
    """(the path matches, a directory above it matches): glob matching by components, `**` any number of them."""

    def done(positions: set[int]) -> bool:
        return any(all(step == '**' for step in pattern[position:]) for position in positions)

    reachable = {0}  # pattern positions reachable after the parts consumed so far
    for depth, part in enumerate(parts):
        if depth and done(reachable):
            return False, True
        following: set[int] = set()
        for position in reachable:
            while position < len(pattern) and pattern[position] == '**':
                following.add(position)  # '**' takes this part and stays
                position += 1
            if position < len(pattern) and fnmatch.fnmatch(part, pattern[position]):
                following.add(position + 1)
        reachable = following
        if not reachable:
            return False, False
    return done(reachable), False


def _recursive_glob(pattern: str, warn: Warn) -> list[Path]:
    """The files a pattern with `**` names (directly, or inside a directory it names), walking each directory once."""
    parts = Path(pattern).parts
    fixed = next(index for index, part in enumerate(parts) if _GLOB_CHARACTERS.intersection(part))
    root = Path(*parts[:fixed]) if fixed else Path()
    info = _stat(root)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return []
    files = []
    for path, is_dir in _walk(root, warn):
        if is_dir:
            continue
        matched, inside = _accepts(path.relative_to(root).parts, parts[fixed:])
        if matched or (inside and not _project_file(path)):
            files.append(path)
    return files


def expand_sources(sources: tuple[str | Path, ...], warn: Warn) -> list[tuple[Path, bool]]:
    """(file, found) for files, directories (every non-hidden file inside, recursively, sorted) and glob patterns."""
    files: dict[object, tuple[Path, bool]] = {}
    for source in sources:
        path = Path(source)
        info = _stat(path)
        if info is not None and stat.S_ISDIR(info.st_mode):
            found = [(file, True) for file in _directory_files(path, warn)]
            if not found:
                raise FileError(path, 'no trace files in this directory')
        elif info is not None or not _GLOB_CHARACTERS.intersection(str(source)):
            found = [(path, False)]
        elif '**' in str(source):
            found = [(file, True) for file in _recursive_glob(str(source), warn)]
            if not found:
                raise FileError(path, 'no files match this pattern')
        else:
            found = []
            for match in sorted(glob.glob(str(source))):
                match_info = _stat(Path(match))
                if match_info is not None and stat.S_ISDIR(match_info.st_mode):
                    found.extend((file, True) for file in _directory_files(Path(match), warn))
                elif match_info is not None:
                    found.append((Path(match), True))
            if not found:
                raise FileError(path, 'no files match this pattern')
        for file, by_walk in found:
            file_info = _stat(file)
            key = (file_info.st_dev, file_info.st_ino) if file_info is not None else file
            first = files.get(key)
            files[key] = (file, by_walk) if first is None else (first[0], first[1] and by_walk)
    return list(files.values())
