"""A stand-in Hugging Face hub: a threaded HTTP server of a folder of repos, on 127.0.0.1.

Layout (``root``):
    ``<root>/models/<repo_id>/<commit>/<files...>``    one folder per commit (40 hex digits), its files as committed
    ``<root>/models/<repo_id>/refs.json``             named refs -> commits, e.g. ``{"main": "<commit>"}``
    ``<root>/models/<alias>/moved.json``              ``{"to": "<repo_id>"}``: a renamed repo (the hub answers 307)
    ``<root>/datasets/<repo_id>/...``                 the same for dataset repos
``repo_id`` is ``owner/name``, or a bare ``name`` (legacy model ids such as ``bert-base-uncased``).
:func:`sentemb.rehearsal.stand_in.build_stand_in_hub` writes such a folder.

Routes (what the clients call; found in huggingface_hub 2.4's ``file_download``, ``hf_api``, ``hf_file_system``):
    ``HEAD|GET /<repo>/resolve/<rev>/<path>``, ``/datasets/<repo>/resolve/...``: a file. ``hf_hub_download``'s
        ``get_hf_file_metadata`` (HEAD: ``X-Repo-Commit``, ``ETag``, ``X-Linked-Etag``/``X-Linked-Size`` for LFS-like
        files, ``Content-Length``), its GET (``Range: bytes=N-`` resumes, 206), and plain HTTP downloads
        (``sentemb.data.download``: ``registry.source_url``).
    ``GET /api/{models,datasets}/<repo>[/revision/<rev>]``: ``model_info``/``dataset_info``/``repo_info`` (``sha``,
        ``siblings``; ``?blobs=true`` adds sizes and LFS sha256); ``datasets.load_dataset`` fixes the commit with it.
    ``GET /api/{models,datasets}/<repo>/tree/<rev>[/<path>]``: ``list_repo_tree`` (``?recursive=``, ``?expand=``),
        which ``HfFileSystem.ls``/``glob``/``find`` call (``datasets`` resolves data files through them).
    ``POST /api/{models,datasets}/<repo>/paths-info/<rev>``: ``get_paths_info`` (form ``paths=...``), from
        ``HfFileSystem.info``.
Revisions: a commit folder, a named ref of ``refs.json`` (URL-encoded by the clients, ``refs%2Fconvert%2Fparquet``;
unencoded also works in resolve URLs), or ``main`` through ``refs.json``; every answer names the commit in
``X-Repo-Commit``. ETags are the files' sha256 (LFS-like files, by suffix or size: also ``X-Linked-Etag``); tree
entries carry the git blob sha1 as ``oid`` and the sha256 as ``lfs.oid``.
Errors: 404 with the hub's ``X-Error-Code``, so that the clients raise their own errors: ``RepoNotFound``
(``RepositoryNotFoundError``), ``RevisionNotFound`` (``RevisionNotFoundError``), ``EntryNotFound``
(``EntryNotFoundError``); 416 for a range past the end.
Usage: ``python -m sentemb.rehearsal.hub --root DIR [--port 0]`` prints the URL; ``with serve(root) as url:`` in
tests (port 0, a daemon thread). Point the clients at it with ``HF_ENDPOINT=<url>`` and a fresh ``HF_HOME``: the
stand-ins carry the real ids and pinned commits, and must never land in the cache that real runs read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from sentemb.errors import ConfigError

COMMIT = re.compile(r"[0-9a-f]{40}")
KINDS = ("models", "datasets")
API_OPERATIONS = ("revision", "tree", "paths-info")
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".h5", ".msgpack", ".onnx", ".parquet", ".arrow", ".tar", ".gz", ".zip")
LFS_MIN_BYTES = 10 * 1024 * 1024  # the hub refuses larger files outside LFS
POINTER_SIZE = 134  # the size of a Git LFS pointer file, as the hub reports it
DATE = "2024-01-01T00:00:00.000Z"  # every stand-in commit's date
_BLOCK = 1 << 20


class HubError(Exception):
    """An answer other than the content asked for (an error, or a redirect: ``Location`` in ``headers``): HTTP
    ``status``, the hub's ``X-Error-Code`` (or None), a message, and the commit for ``X-Repo-Commit`` when known."""

    def __init__(self, status: int, code: str | None, message: str, commit: str | None = None, **headers: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = {**({"X-Repo-Commit": commit} if commit else {}), **headers}


@dataclass(frozen=True)
class Repo:
    """One repo of the served folder: ``kind`` (``models`` or ``datasets``), its id and its folder."""

    kind: str
    repo_id: str
    folder: Path

    def moved_to(self) -> str | None:
        moved = self.folder / "moved.json"
        return json.loads(moved.read_text(encoding="utf-8"))["to"] if moved.is_file() else None

    def refs(self) -> dict[str, str]:
        refs = self.folder / "refs.json"
        return json.loads(refs.read_text(encoding="utf-8")) if refs.is_file() else {}

    def commit(self, revision: str) -> str:
        """The commit that ``revision`` (a commit or a named ref) names; HubError RevisionNotFound when none."""
        commit = revision if COMMIT.fullmatch(revision) else self.refs().get(revision)
        if commit is None or not (self.folder / commit).is_dir():
            raise HubError(404, "RevisionNotFound", f"Invalid rev id: {revision} (repo {self.repo_id})")
        return commit

    def split_revision(self, tail: list[str]) -> tuple[str, list[str]]:
        """(commit, rest of the path) from the segments after ``resolve/`` or ``tree/``: the first segment, or an
        unencoded named ref spread over several (``refs/convert/parquet/<file>``)."""
        if not tail:
            raise HubError(404, "RevisionNotFound", f"no revision given (repo {self.repo_id})")
        try:
            return self.commit(tail[0]), tail[1:]
        except HubError:
            refs = self.refs()
            for n in range(len(tail), 1, -1):
                if "/".join(tail[:n]) in refs:
                    return self.commit("/".join(tail[:n])), tail[n:]
            raise

    def path(self, commit: str, relpath: str) -> Path:
        return self.folder / commit / relpath if relpath else self.folder / commit


def _safe(segments: list[str]) -> bool:
    """Whether ``segments`` (URL-decoded: one may hold a ``/``) name a path inside a folder: no ``..``, no empty one."""
    parts = "/".join(segments).split("/")
    return bool(segments) and all(p and p not in (".", "..") and "\\" not in p and "\0" not in p for p in parts)


def find_repo(root: Path, kind: str, segments: list[str]) -> Repo:
    """The repo ``segments`` (``[owner, name]`` or ``[name]``) names in ``root/kind``; HubError RepoNotFound."""
    repo_id = "/".join(segments)
    folder = root / kind / repo_id
    known = _safe(segments) and folder.is_dir()
    if known and not ((folder / "refs.json").is_file() or (folder / "moved.json").is_file()):
        known = any(COMMIT.fullmatch(child.name) for child in folder.iterdir() if child.is_dir())
    if not known:
        raise HubError(404, "RepoNotFound", f"Repository not found: {kind}/{repo_id}")
    return Repo(kind, repo_id, folder)


_HASHES: dict[tuple[str, int, int], tuple[str, str]] = {}
_HASHES_LOCK = threading.Lock()


def file_hashes(path: Path) -> tuple[str, str]:
    """(sha256, git blob sha1) of a file, computed once per path, size and modification time."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _HASHES_LOCK:
        if key in _HASHES:
            return _HASHES[key]
    sha256, sha1 = hashlib.sha256(), hashlib.sha1(f"blob {stat.st_size}\0".encode())
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            sha256.update(block)
            sha1.update(block)
    with _HASHES_LOCK:
        _HASHES[key] = (sha256.hexdigest(), sha1.hexdigest())
    return _HASHES[key]


def is_lfs(path: Path) -> bool:
    """Whether the hub would keep ``path`` in Git LFS: a binary by its suffix, or a large file."""
    return path.name.endswith(LFS_SUFFIXES) or path.stat().st_size >= LFS_MIN_BYTES


def entry(repo: Repo, commit: str, relpath: str, expand: bool = False) -> dict:
    """A tree / paths-info entry of ``relpath`` at ``commit``, as the hub's API writes it."""
    path = repo.path(commit, relpath)
    if path.is_dir():
        listing = "\n".join(sorted(p.relative_to(path).as_posix() for p in path.rglob("*")))
        found: dict = {"type": "directory", "oid": hashlib.sha1(listing.encode()).hexdigest(), "path": relpath}
    else:
        sha256, sha1 = file_hashes(path)
        size = path.stat().st_size
        found = {"type": "file", "oid": sha1, "size": size, "path": relpath}
        if is_lfs(path):
            found["lfs"] = {"oid": sha256, "size": size, "pointerSize": POINTER_SIZE}
    if expand:
        found["lastCommit"] = {"id": commit, "title": "stand-in", "date": DATE}
    return found


def tree(repo: Repo, commit: str, relpath: str, recursive: bool, expand: bool) -> list[dict]:
    """The entries below ``relpath`` (its children, or with ``recursive`` all it holds), sorted by path."""
    folder = repo.path(commit, relpath)
    if not folder.is_dir():
        raise HubError(404, "EntryNotFound", f"{relpath} does not exist at {commit} (repo {repo.repo_id})", commit)
    children = folder.rglob("*") if recursive else folder.iterdir()
    base = repo.path(commit, "")
    return [entry(repo, commit, p.relative_to(base).as_posix(), expand) for p in sorted(children)]


def info(repo: Repo, commit: str, blobs: bool) -> dict:
    """``model_info`` / ``dataset_info``: the repo's id, the commit and its files (``siblings``)."""
    siblings = []
    for item in tree(repo, commit, "", recursive=True, expand=False):
        if item["type"] != "file":
            continue
        sibling: dict = {"rfilename": item["path"]}
        if blobs:
            sibling.update(size=item["size"], blobId=item["oid"])
            if "lfs" in item:
                sibling["lfs"] = {"sha256": item["lfs"]["oid"], "size": item["size"], "pointerSize": POINTER_SIZE}
        siblings.append(sibling)
    owner = repo.repo_id.split("/")[0] if "/" in repo.repo_id else None
    fields = {"private": False, "disabled": False, "gated": False, "downloads": 0, "likes": 0, "tags": []}
    return {
        "_id": hashlib.sha1(repo.repo_id.encode()).hexdigest()[:24],
        "id": repo.repo_id,
        **({"author": owner} if owner else {}),
        "sha": commit,
        "lastModified": DATE,
        "createdAt": DATE,
        **fields,
        "siblings": siblings,
    }


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) byte of a ``Range: bytes=...`` header (None: the whole file); HubError 416 past the end."""
    if not header:
        return None
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if match is None or match.groups() == ("", ""):
        return None  # not a single byte range: the whole file, as a server may answer
    first, last = match.groups()
    if first == "":
        start, end = max(0, size - int(last)), size - 1
    else:
        start, end = int(first), (min(int(last), size - 1) if last else size - 1)
    if start >= size or start > end:
        past = f"range {header} is past the end of a {size}-byte file"
        raise HubError(416, None, past, **{"Content-Range": f"bytes */{size}"})
    return start, end


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[0].lower() in ("1", "true")


class Handler(BaseHTTPRequestHandler):
    """Answers one request of the routes above (module docstring); every answer has a Content-Length (keep-alive)."""

    protocol_version = "HTTP/1.1"
    server: StandInHub

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_POST(self) -> None:
        self._answer(send_body=True)

    def _answer(self, send_body: bool) -> None:
        length = self.headers.get("Content-Length", "0")
        self.request_body = self.rfile.read(int(length)) if length.isdigit() and int(length) else b""
        try:
            self._route(send_body)
        except HubError as exc:
            self._error(exc, send_body)
        except (BrokenPipeError, ConnectionResetError):  # the client went away mid-answer
            self.close_connection = True

    def _route(self, send_body: bool) -> None:
        split = urlsplit(self.path)
        raw = split.path.split("/")[1:]
        segments = [unquote(s) for s in raw]
        if len(segments) >= 3 and segments[0] == "api" and segments[1] in KINDS:
            return self._api(segments[1], raw, segments, parse_qs(split.query), send_body)
        start = 1 if segments[:1] == ["datasets"] else 0
        for n in (1, 2):
            if len(segments) > start + n and segments[start + n] == "resolve" and self.command != "POST":
                repo = self._repo(KINDS[start], raw, start, n)
                return self._file(repo, segments[start + n + 1 :], send_body)
        raise HubError(404, None, f"the stand-in hub serves no route {self.command} {split.path}")

    def _repo(self, kind: str, raw: list[str], start: int, n: int) -> Repo:
        """The repo of ``raw[start:start + n]``; a renamed one answers 307 to the same route of its new id."""
        repo = find_repo(self.server.root, kind, [unquote(s) for s in raw[start : start + n]])
        moved = repo.moved_to()
        if moved is None:
            return repo
        target = [quote(s, safe="") for s in moved.split("/")]
        query = urlsplit(self.path).query
        location = "/" + "/".join(raw[:start] + target + raw[start + n :]) + (f"?{query}" if query else "")
        raise HubError(307, None, f"{repo.repo_id} moved to {moved}", Location=location)

    def _api(self, kind: str, raw: list[str], segments: list[str], query: dict, send_body: bool) -> None:
        rest = segments[2:]
        if len(rest) >= 2 and rest[1] in API_OPERATIONS:
            n = 1
        elif len(rest) >= 3 and rest[2] in API_OPERATIONS:
            n = 2
        elif len(rest) <= 2:
            n = len(rest)
        else:
            raise HubError(404, None, f"the stand-in hub serves no route {self.command} /{'/'.join(segments)}")
        repo = self._repo(kind, raw, 2, n)
        operation, tail = (rest[n], rest[n + 1 :]) if len(rest) > n else ("revision", ["main"])
        commit, inner = repo.split_revision(tail)
        if operation == "paths-info" and self.command == "POST" and not inner:
            return self._json(self._paths_info(repo, commit), commit, send_body)
        if operation == "tree" and self.command != "POST" and (not inner or _safe(inner)):
            found = tree(repo, commit, "/".join(inner), _flag(query, "recursive"), _flag(query, "expand"))
            return self._json(found, commit, send_body)
        if operation == "revision" and self.command != "POST" and not inner:
            return self._json(info(repo, commit, _flag(query, "blobs")), commit, send_body)
        raise HubError(404, None, f"the stand-in hub serves no route {self.command} /{'/'.join(segments)}")

    def _paths_info(self, repo: Repo, commit: str) -> list[dict]:
        """The entries of the POSTed ``paths`` (form or JSON) that exist at ``commit``."""
        if "json" in self.headers.get("Content-Type", ""):
            form = json.loads(self.request_body or b"{}")
            paths, expand = form.get("paths", []), bool(form.get("expand", False))
        else:
            form = parse_qs(self.request_body.decode("utf-8"))
            paths, expand = form.get("paths", []), _flag(form, "expand")
        paths = [p.strip("/") for p in ([paths] if isinstance(paths, str) else paths)]
        return [entry(repo, commit, p, expand) for p in paths if _safe(p.split("/")) and repo.path(commit, p).exists()]

    def _file(self, repo: Repo, tail: list[str], send_body: bool) -> None:
        commit, inner = repo.split_revision(tail)
        relpath = "/".join(inner)
        path = repo.path(commit, relpath)
        if not _safe(inner) or not path.is_file():
            raise HubError(404, "EntryNotFound", f"{relpath or '(no file)'} does not exist at {commit}", commit)
        sha256, _ = file_hashes(path)
        size = path.stat().st_size
        headers = {"X-Repo-Commit": commit, "ETag": f'"{sha256}"', "Accept-Ranges": "bytes"}
        if is_lfs(path):
            headers.update({"X-Linked-Etag": f'"{sha256}"', "X-Linked-Size": str(size)})
        text = path.suffix in (".txt", ".csv", ".md", ".json")
        headers["Content-Type"] = "text/plain; charset=utf-8" if text else "application/octet-stream"
        span = byte_range(self.headers.get("Range"), size)
        start, end = span or (0, size - 1)
        if span is not None:
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        self._head(206 if span is not None else 200, headers, end - start + 1)
        if send_body:
            with open(path, "rb") as handle:
                handle.seek(start)
                left = end - start + 1
                while left > 0:
                    block = handle.read(min(_BLOCK, left))
                    if not block:
                        break
                    self.wfile.write(block)
                    left -= len(block)

    def _head(self, status: int, headers: dict[str, str], length: int) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _json(self, payload, commit: str, send_body: bool) -> None:
        body = json.dumps(payload).encode()
        self._head(200, {"Content-Type": "application/json", "X-Repo-Commit": commit}, len(body))
        if send_body:
            self.wfile.write(body)

    def _error(self, exc: HubError, send_body: bool) -> None:
        body = json.dumps({"error": exc.message}).encode()
        headers = {"Content-Type": "application/json", **exc.headers}
        if exc.code:
            message = exc.message.encode("ascii", "replace").decode()  # a header value: ASCII only
            headers.update({"X-Error-Code": exc.code, "X-Error-Message": message})
        self._head(exc.status, headers, len(body))
        if send_body:
            self.wfile.write(body)

    def log_request(self, code="-", size="-") -> None:
        line = f"{self.command} {self.path} {code}"
        self.server.requests.append(line)
        if self.server.verbose:
            print(f"[hub] {line}", file=sys.stderr, flush=True)

    def log_message(self, format, *args) -> None:  # noqa: A002 - BaseHTTPRequestHandler's signature
        if self.server.verbose:
            super().log_message(format, *args)


class StandInHub(ThreadingHTTPServer):
    """The server of a folder laid out as the module docstring says; ``requests`` lists every answer given
    (``METHOD path status``), for tests and ``--verbose``."""

    daemon_threads = True

    def __init__(self, root: str | Path, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> None:
        root = Path(root).expanduser().resolve()
        if not any((root / kind).is_dir() for kind in KINDS):
            raise ConfigError(
                f"{root} holds neither models/ nor datasets/: it is not a stand-in hub folder.\n  Fix: build one with "
                f"`python -m sentemb.rehearsal.stand_in {root}`, or pass --root the folder that it wrote."
            )
        super().__init__((host, port), Handler)
        self.root, self.verbose, self.requests = root, verbose, []

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


@contextmanager
def serve(root: str | Path, host: str = "127.0.0.1", port: int = 0, log: list[str] | None = None) -> Iterator[str]:
    """Serve ``root`` from a daemon thread (by default on a free port) and yield its URL, for ``HF_ENDPOINT``; each
    answer's ``METHOD path status`` is appended to ``log`` when one is given. Stops the server on exit."""
    server = StandInHub(root, host, port)
    if log is not None:
        server.requests = log
    thread = threading.Thread(target=server.serve_forever, name="stand-in-hub", daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sentemb.rehearsal.hub", description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the folder of repos (sentemb.rehearsal.stand_in writes one)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="the port (default 0: a free one)")
    parser.add_argument("--verbose", action="store_true", help="print every request to stderr")
    args = parser.parse_args(argv)
    try:
        server = StandInHub(args.root, args.host, args.port, args.verbose)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(server.url, flush=True)
    print(
        f"[hub] serving {server.root}; point the clients at it with HF_ENDPOINT={server.url} and a fresh HF_HOME "
        "(the stand-ins carry the real ids and pins); Ctrl-C stops it",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
