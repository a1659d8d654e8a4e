"""Team index: one index built in CI, published to object storage, used by every developer as a base.

Why: embedding a large monorepo on a laptop CPU takes long; CI embeds it once per commit, developers
download that snapshot and embed only what differs locally.

Remote layout under the shared location (`s3://bucket/prefix`, or a plain directory / `file://` URI):

    <prefix>/<commit>/<publish-id>/db/...        LanceDB tables (`chunks`, `vectors`) of that commit
    <prefix>/<commit>/<publish-id>/state.json    the index state: per-file records (blob ids, hashes)
    <prefix>/<commit>/manifest.json              written last; names the publish id and every file,
                                                 with its size and sha256

Safety: a publisher writes data under a prefix no one else uses (a fresh publish id), checks it (file
sizes, and LanceDB opening the remote tables and counting rows), and only then puts the manifest, a
single object that appears whole. Two publishers of one commit each write complete data; the last
manifest wins and both point at valid snapshots.

A reader trusts nothing it was not told about: it downloads only the files the manifest lists (never a
listing of the prefix), each at most its listed size, the whole under `shared_index_max_mb`, and checks
every file's size and sha256; any mismatch, or a manifest without hashes, rejects the base in one line
and the repository is indexed locally. The rows of an accepted base are then checked against the files
they claim (hippo.sharing.team_verify) before the swap: a file whose rows the local chunker does not
reproduce loses them and is indexed locally.

Local side: the snapshot is downloaded and becomes `.hippo/` (tables + state.json, the state's file
records keyed by git blob id). The ordinary incremental indexer then re-indexes only files whose content
differs from the base (local commits, dirty and untracked files, deletions), and reuses the base's vector
cache for unchanged text. So the local index *is* base + overlay, merged at the table level: overlay rows
replace the base rows of the same files in one commit, and deleted files lose theirs.

pyarrow (for the filesystem) and hippo.index.store (lancedb) are imported inside functions: `hippo index` with a fresh
check-result (see CHECK_TTL) touches neither the network nor these modules.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from hippo.core import indexdir
from hippo.core.config import Settings
from hippo.core.errors import HippoError
from hippo.core.indexdir import IndexDir

FORMAT = 1
MANIFEST = "manifest.json"
MiB = 1024 * 1024
READ_BLOCK = MiB
WALK_DEPTH = 64  # how many first-parent ancestors of HEAD may serve as a base
CHECK_TTL = 600.0  # seconds: with an unchanged HEAD, do not ask the remote again before this
DOWNLOAD_PREFIX = ".base-download-"


class RemoteError(HippoError):
    """The shared location could not be reached or read."""


class BaseRejected(HippoError):
    """A snapshot that does not match its manifest (or has no hashes, or is too large): never used."""


# --- location ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Location:
    """A parsed shared-index location: which filesystem, and the base path inside it."""

    uri: str
    scheme: str  # "s3" or "file"
    path: str  # bucket/prefix for s3, an absolute directory for file
    endpoint: str = ""
    region: str = ""

    def filesystem(self):
        import pyarrow.fs as pafs

        if self.scheme == "file":
            return pafs.LocalFileSystem()
        env = os.environ
        kw: dict = {"region": self.region, "connect_timeout": 3, "request_timeout": 60,
                    "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=2)}
        if self.endpoint:
            parts = urlsplit(self.endpoint)
            kw["endpoint_override"] = parts.netloc or parts.path
            kw["scheme"] = parts.scheme or "https"
        if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
            kw.update(access_key=env["AWS_ACCESS_KEY_ID"], secret_key=env["AWS_SECRET_ACCESS_KEY"],
                      session_token=env.get("AWS_SESSION_TOKEN") or None)
        return pafs.S3FileSystem(**kw)

    def join(self, *parts: str) -> str:
        return "/".join([self.path.rstrip("/"), *parts])

    def lance_uri(self, rel: str) -> str:
        """URI LanceDB understands for a path under this location."""
        return f"s3://{self.join(rel)}" if self.scheme == "s3" else self.join(rel)

    def storage_options(self) -> dict[str, str]:
        """LanceDB object-store options (endpoint, region, http, keys) for this location."""
        if self.scheme != "s3":
            return {}
        opts = {"region": self.region}
        if self.endpoint:
            opts["endpoint"] = self.endpoint
            if self.endpoint.startswith("http://"):
                opts["allow_http"] = "true"
        env = os.environ
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            if env.get(key):
                opts[key.lower()] = env[key]
        return opts


def parse_location(uri: str, env: dict[str, str] | None = None) -> Location:
    """`s3://bucket/prefix[?endpoint=...&region=...]`, `file:///dir` or a directory path.

    The endpoint may also come from HIPPO_S3_ENDPOINT, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; keys
    only from the usual AWS variables (never from the URI, which sits in a committed config file).
    """
    env = dict(os.environ) if env is None else env
    uri = uri.strip()
    parts = urlsplit(uri)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise HippoError(f"Shared index {uri!r} names no bucket (expected s3://bucket/prefix).")
        q = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        endpoint = (q.get("endpoint") or env.get("HIPPO_S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL_S3")
                    or env.get("AWS_ENDPOINT_URL") or "")
        region = q.get("region") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        path = (parts.netloc + "/" + parts.path.strip("/")).rstrip("/")
        return Location(uri=uri, scheme="s3", path=path, endpoint=endpoint.rstrip("/"), region=region)
    if parts.scheme in ("", "file"):
        raw = parts.path if parts.scheme == "file" else uri
        return Location(uri=uri, scheme="file", path=str(Path(raw).expanduser().resolve()))
    raise HippoError(f"Shared index {uri!r}: only s3:// URIs and directories are supported.")


# --- manifest ------------------------------------------------------------------------------------

@dataclass
class Manifest:
    commit: str
    model_id: str
    dim: int
    schema_version: int
    publish_id: str
    created_at: float
    chunks: int
    files: dict[str, int] = field(default_factory=dict)  # snapshot-relative path -> size in bytes
    sha256: dict[str, str] = field(default_factory=dict)  # snapshot-relative path -> sha256 hex of its bytes
    format: int = FORMAT
    hippo_version: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, data: bytes | str) -> Manifest | None:
        """None for anything that is not a complete manifest of a format this hippo reads."""
        try:
            raw = json.loads(data)
            m = cls(**{k: raw[k] for k in cls.__dataclass_fields__ if k in raw})
        except (ValueError, TypeError, KeyError):
            return None
        ok = (m.format == FORMAT and isinstance(m.files, dict) and indexdir.STATE in m.files
              and isinstance(m.commit, str) and len(m.commit) >= 7 and m.publish_id
              and "/" not in m.publish_id and ".." not in m.publish_id
              and all(isinstance(v, int) and _safe_rel(k) for k, v in m.files.items())
              and isinstance(m.sha256, dict) and all(isinstance(v, str) for v in m.sha256.values()))
        return m if ok else None

    def problem(self, cap_bytes: int) -> str | None:
        """Why this manifest's snapshot must not be downloaded (checked before a single byte is), or None."""
        if not self.sha256 or set(self.sha256) != set(self.files):
            return ("its manifest has no content hashes (published by an older hippo); ask the publisher to "
                    "re-publish it with `hippo publish --force`")
        odd = next((k for k in self.files if k != indexdir.STATE and not k.startswith(f"{indexdir.DB}/")), None)
        if odd is not None:
            return f"its manifest lists {odd!r}, which is not part of an index"
        bad = next((k for k, v in self.files.items() if v < 0), None) or \
            next((k for k, v in self.sha256.items() if len(v) != 64 or v.strip("0123456789abcdef")), None)
        if bad is not None:
            return f"its manifest has a malformed entry for {bad!r}"
        total = sum(self.files.values())
        if total > cap_bytes:
            return (f"it is {total / MiB:,.0f} MB, over the {cap_bytes / MiB:,.0f} MB limit "
                    "(HIPPO_SHARED_INDEX_MAX_MB)")
        return None


def _safe_rel(rel: str) -> bool:
    return bool(rel) and not rel.startswith("/") and ".." not in rel.split("/")


def _read(fs, path: str) -> bytes | None:
    import pyarrow.fs as pafs

    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File:
        return None
    with fs.open_input_stream(path) as fh:
        return fh.read()


def _write(fs, path: str, data: bytes) -> None:
    """One object put (S3 shows it whole or not at all); locally a temp file renamed into place."""
    if type(fs).__name__ == "LocalFileSystem":
        from hippo.core.indexdir import atomic_write

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, mode=0o644)  # a shared location: other users read it
        return
    with fs.open_output_stream(path) as fh:
        fh.write(data)


def _list_sizes(fs, path: str) -> dict[str, int]:
    import pyarrow.fs as pafs

    sel = pafs.FileSelector(path, recursive=True, allow_not_found=True)
    base = path.rstrip("/") + "/"
    return {i.path[len(base):]: i.size for i in fs.get_file_info(sel) if i.type == pafs.FileType.File}


def read_manifest(loc: Location, commit: str, fs=None) -> Manifest | None:
    fs = fs or loc.filesystem()
    try:
        data = _read(fs, loc.join(commit, MANIFEST))
    except OSError as exc:
        raise RemoteError(f"cannot read {loc.uri}: {exc}") from exc
    m = Manifest.from_json(data) if data is not None else None
    return m if m is not None and m.commit == commit else None


def published_commits(loc: Location, fs=None) -> set[str]:
    """Commit folders under the location (one listing; a folder without a manifest is skipped later)."""
    import pyarrow.fs as pafs

    fs = fs or loc.filesystem()
    try:
        infos = fs.get_file_info(pafs.FileSelector(loc.path, recursive=False, allow_not_found=True))
    except OSError as exc:
        raise RemoteError(f"cannot list {loc.uri}: {exc}") from exc
    return {i.base_name for i in infos if i.type == pafs.FileType.Directory}


# --- publish (CI side) ---------------------------------------------------------------------------

@dataclass
class PublishReport:
    commit: str = ""
    publish_id: str = ""
    chunks: int = 0
    files: int = 0
    bytes: int = 0
    skipped: bool = False  # a manifest for this commit, model and schema was already there
    seconds: float = 0.0
    index: object = None  # the IndexReport of the indexing run before the upload


def publish(root: Path, settings: Settings, *, embedder=None, allow_dirty: bool = False, force: bool = False,
            progress=None) -> PublishReport:
    """Index HEAD (incrementally, seeded from an ancestor's snapshot when one exists) and upload it."""
    from hippo.core import gitutil
    from hippo.index.indexer import Indexer, WriterLock
    from hippo.index.state import SCHEMA_VERSION, load_state

    started = time.monotonic()
    if not settings.shared_index:
        raise HippoError("No shared index configured: set `shared_index` in hippo.toml or HIPPO_SHARED_INDEX.")
    loc = parse_location(settings.shared_index)
    commit = gitutil.head_commit(root)
    if not commit:
        raise HippoError("`hippo publish` needs a git repository with at least one commit.")
    dirty = [p for p in gitutil.dirty_files(root) if not p.startswith(".hippo/")]
    if dirty and not allow_dirty:
        raise HippoError(f"The work tree differs from {commit[:12]} ({len(dirty)} files, e.g. {dirty[0]}); "
                         "publish from a clean checkout or pass --allow-dirty.")
    fs = loc.filesystem()
    indexer = Indexer(root, settings, embedder=embedder, progress=progress)
    existing = read_manifest(loc, commit, fs)
    if existing is not None and not force and _compatible(existing, indexer.model_name, SCHEMA_VERSION):
        return PublishReport(commit=commit, publish_id=existing.publish_id, chunks=existing.chunks,
                             files=len(existing.files), skipped=True, seconds=time.monotonic() - started)
    sync_base(root, settings, force_check=True, embedder_model=indexer.model_name)
    index_report = indexer.run(vectors=True)
    report = PublishReport(commit=commit, publish_id=f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-"
                                                     f"{uuid.uuid4().hex[:12]}", index=index_report)
    snap = loc.join(commit, report.publish_id)
    with WriterLock(indexer.index_dir, 60.0):  # nobody rewrites the tables while they upload
        state = load_state(indexer.index_dir)
        if state is None or not state.complete or not state.vectors_complete or state.indexed_commit != commit:
            raise HippoError("The local index is not complete for HEAD; run `hippo index` and try again.")
        import pyarrow.fs as pafs

        local_db = IndexDir(indexer.index_dir).db
        try:
            fs.create_dir(snap, recursive=True)
            pafs.copy_files(str(local_db), f"{snap}/db", source_filesystem=pafs.LocalFileSystem(),
                            destination_filesystem=fs)
            _write(fs, f"{snap}/{indexdir.STATE}", IndexDir(indexer.index_dir).state.read_bytes())
            local = {f"db/{k}": v for k, v in _list_sizes(pafs.LocalFileSystem(), str(local_db)).items()}
            local[indexdir.STATE] = IndexDir(indexer.index_dir).state.stat().st_size
            hashes = {rel: _sha256_file(indexer.index_dir / rel) for rel in local}
            remote = _list_sizes(fs, snap)
        except OSError as exc:
            raise RemoteError(f"upload to {loc.uri} failed: {exc}") from exc
        missing = [k for k, v in local.items() if remote.get(k) != v]
        if missing:
            raise RemoteError(f"upload to {loc.uri} is incomplete ({len(missing)} files differ, e.g. {missing[0]}).")
        from hippo.index.store import Store

        st = Store(indexer.index_dir, state.dim, writer=True)
        local_rows = st.count()
        remote_rows = _remote_rows(loc, f"{commit}/{report.publish_id}/db")
        if remote_rows != local_rows:
            raise RemoteError(f"the uploaded index has {remote_rows} chunks, the local one {local_rows}.")
    from hippo import __version__

    manifest = Manifest(commit=commit, model_id=state.model_id, dim=state.dim, schema_version=state.schema_version,
                        publish_id=report.publish_id, created_at=time.time(), chunks=local_rows, files=local,
                        sha256=hashes, hippo_version=__version__)
    _write(fs, loc.join(commit, MANIFEST), manifest.to_json().encode())
    report.chunks, report.files, report.bytes = local_rows, len(local), sum(local.values())
    report.seconds = time.monotonic() - started
    return report


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(READ_BLOCK):
            h.update(block)
    return h.hexdigest()


def _remote_rows(loc: Location, rel: str) -> int:
    """Open the uploaded tables the way any LanceDB client would, and count the chunks."""
    from hippo.index.store import remote_row_count

    try:
        return remote_row_count(loc.lance_uri(rel), loc.storage_options())
    except Exception as exc:
        raise RemoteError(f"LanceDB cannot open the uploaded index: {exc}") from exc


def _compatible(m: Manifest, model_id: str, schema_version: int) -> bool:
    return m.model_id == model_id and m.schema_version == schema_version


# --- consume (developer side) --------------------------------------------------------------------

@dataclass
class SyncResult:
    action: str  # "seeded" | "kept" | "none" | "offline" | "rejected" | "cached" | "off" | "error"
    base_commit: str | None = None
    message: str | None = None  # say-once notice for the user (None when nothing new to say)
    seconds: float = 0.0
    bytes: int = 0
    reindexed: list[str] = field(default_factory=list)  # base files whose rows failed verification
    verify_seconds: float = 0.0
    verification: object = None  # the team_verify.Verification of a seeded base


def _team_file(index_dir: Path) -> Path:
    return IndexDir(index_dir).team


def load_team(index_dir: Path) -> dict:
    try:
        data = json.loads(_team_file(index_dir).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_team(index_dir: Path, data: dict) -> None:
    from hippo.core.indexdir import atomic_write, create

    create(index_dir)
    atomic_write(_team_file(index_dir), json.dumps(data, indent=1))


def ancestors(root: Path, depth: int = WALK_DEPTH) -> list[str]:
    """HEAD and its first-parent ancestors, nearest first."""
    from hippo.core import gitutil

    if not gitutil.is_git_repo(root) or not gitutil.head_commit(root):
        return []
    out = gitutil._out(root, "rev-list", "--first-parent", f"--max-count={int(depth)}", "HEAD")
    return [line.strip() for line in out.splitlines() if line.strip()]


def find_base(loc: Location, commits: list[str], model_id: str, schema_version: int, fs=None) -> Manifest | None:
    """The nearest commit in `commits` with a complete, compatible manifest."""
    fs = fs or loc.filesystem()
    published = published_commits(loc, fs)
    for c in commits:
        if c in published:
            m = read_manifest(loc, c, fs)
            if m is not None and _compatible(m, model_id, schema_version):
                return m
    return None


def sync_base(root: Path, settings: Settings, *, force_check: bool = False,
              embedder_model: str | None = None) -> SyncResult:
    """Before indexing: make `.hippo/` start from the nearest published snapshot when that saves work.

    Never raises: the caller indexes locally either way. Notices are returned once (a repeat of the
    previous notice is dropped), so hooks running `hippo index` often stay quiet.
    """
    try:
        return _sync_base(root, settings, force_check, embedder_model)
    except Exception as exc:  # noqa: BLE001 - the shared index is an accelerator, never a reason to fail
        return SyncResult("error", message=f"hippo: shared index skipped ({type(exc).__name__}: {_short(exc)}); "
                                           "indexing locally.")


def _sync_base(root: Path, settings: Settings, force_check: bool, embedder_model: str | None) -> SyncResult:
    from hippo.index.state import SCHEMA_VERSION, load_state

    started = time.monotonic()
    if not settings.shared_index:
        return SyncResult("off")
    index_dir = IndexDir.of(root, settings).path
    team = load_team(index_dir)
    heads = ancestors(root)
    if not heads:
        return SyncResult("none")
    if (not force_check and not team.get("seeding") and team.get("checked_head") == heads[0]
            and time.time() - float(team.get("checked_at", 0)) < CHECK_TTL):
        return SyncResult("cached", team.get("base_commit"))
    if embedder_model is None:
        from hippo.index.embedding import model_id_for

        embedder_model = model_id_for(settings.model)
    try:
        loc = parse_location(settings.shared_index)
        fs = loc.filesystem()
        base = find_base(loc, heads, embedder_model, SCHEMA_VERSION, fs)
    except (RemoteError, OSError, HippoError) as exc:
        return _finish(index_dir, team, heads[0], SyncResult("offline", team.get("base_commit")), started,
                       f"hippo: shared index {settings.shared_index} is unreachable ({_short(exc)}); "
                       "indexing locally.")
    if base is None:
        return _finish(index_dir, team, heads[0], SyncResult("none", team.get("base_commit")), started,
                       f"hippo: no shared index for the last {len(heads)} commits of HEAD at "
                       f"{settings.shared_index}; indexing locally.")
    state = load_state(index_dir)
    interrupted = bool(team.get("seeding"))
    # A local index seeded before bases were verified vouches for nothing: it is replaced once, verified.
    trusted = not team.get("base_commit") or bool(team.get("verified"))
    if (state is not None and not interrupted and trusted
            and _local_is_fresher(root, state, base, embedder_model, SCHEMA_VERSION)):
        return _finish(index_dir, team, heads[0], SyncResult("kept", team.get("base_commit")), started, None)
    key = f"{base.commit}/{base.publish_id}"
    if team.get("rejected") == key:  # rejected before: not downloaded again (the notice is not repeated)
        return _finish(index_dir, team, heads[0], SyncResult("rejected", team.get("base_commit")), started,
                       team.get("rejected_notice"))
    try:
        size, check = _seed(root, settings, loc, fs, base, trusted and not interrupted)
    except BaseRejected as exc:
        notice = f"hippo: shared index {base.commit[:12]}/{base.publish_id} rejected: {_short(exc, 240)}; " \
                 "indexing locally."
        team.update(rejected=key, rejected_notice=notice)
        return _finish(index_dir, team, heads[0], SyncResult("rejected", team.get("base_commit")), started, notice)
    except (HippoError, OSError) as exc:  # RemoteError, or the index locked by a long run
        return _finish(index_dir, team, heads[0], SyncResult("offline", team.get("base_commit")), started,
                       f"hippo: could not download the shared index ({_short(exc)}); indexing locally.")
    team.pop("seeding", None)
    team.update(base_commit=base.commit, base_publish_id=base.publish_id, base_model=base.model_id, verified=True)
    res = SyncResult("seeded", base.commit, bytes=size, reindexed=check.refused, verify_seconds=check.seconds,
                     verification=check)
    redo = ""
    if check.refused:
        n = len(check.refused)
        redo = (f"; the rows of {n} file{'s' if n != 1 else ''} (e.g. {check.refused[0][:80]!r}) did not match "
                "the files and were dropped")
    return _finish(index_dir, team, heads[0], res, started,
                   f"hippo: using the shared index of {base.commit[:12]} ({base.chunks} chunks{redo}); "
                   "indexing only local changes.")


def _short(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(str(exc).split())
    return text[:limit] + ("..." if len(text) > limit else "")


def _finish(index_dir: Path, team: dict, head: str, res: SyncResult, started: float, notice: str | None) -> SyncResult:
    kind = notice.split(";")[0] if notice else None
    if notice and team.get("last_notice") != kind:
        res.message = notice
    if notice and res.action != "seeded":
        team["last_notice"] = kind
    elif res.action in ("seeded", "kept"):
        team.pop("last_notice", None)  # back online: a later outage is news again
    team.update(checked_head=head, checked_at=time.time(), last_action=res.action)
    try:
        _save_team(index_dir, team)
    except OSError:
        pass
    res.seconds = time.monotonic() - started
    return res


def _local_is_fresher(root: Path, state, base: Manifest, model_id: str, schema_version: int) -> bool:
    """Keep the local index when it is usable and already at (or past) the base commit."""
    from hippo.core import gitutil

    if state.model_id != model_id or state.schema_version != schema_version or not state.complete:
        return False
    if not state.indexed_commit:
        return False
    return gitutil.is_ancestor(root, base.commit, state.indexed_commit)


def _seed(root: Path, settings: Settings, loc: Location, fs, base: Manifest, trusted: bool):
    """Download the files the manifest lists beside `.hippo/db`, check each one's size and sha256, verify
    the rows against the local files (hippo.sharing.team_verify), then swap it in under the lock.

    `trusted`: the local index was built here or from a verified base, so its rows may vouch for equal
    base rows of the same blob. Returns (bytes downloaded, the verification). Raises BaseRejected for a
    snapshot that does not match its manifest, RemoteError when the store fails.
    """
    from hippo.core.integrity import prepare_for_writing
    from hippo.index.indexer import WriterLock
    from hippo.index.state import load_state
    from hippo.sharing.team_verify import verify_base

    where = f"{base.commit[:12]}/{base.publish_id}"
    problem = base.problem(settings.shared_index_max_mb * MiB)
    if problem:
        raise BaseRejected(problem)
    index_dir = IndexDir.of(root, settings).path
    prepare_for_writing(root, index_dir)
    _sweep_downloads(index_dir)
    tmp = index_dir / f"{DOWNLOAD_PREFIX}{uuid.uuid4().hex[:12]}"
    try:
        for rel in sorted(base.files):
            _fetch(fs, loc.join(base.commit, base.publish_id), rel, tmp, base.files[rel], base.sha256[rel])
        state = load_state(tmp)
        if state is None or state.model_id != base.model_id or state.dim != base.dim:
            raise BaseRejected("its state.json is unreadable or names another model")
        try:
            check = verify_base(root, settings, tmp, state, trusted_dir=index_dir if trusted else None)
        except OSError:
            raise
        except Exception as exc:  # noqa: BLE001 - tables that match their hashes yet do not read as an index
            raise BaseRejected(f"its tables cannot be read ({type(exc).__name__}: {_short(exc, 80)})") from exc
        with WriterLock(index_dir, 30.0):
            team = load_team(index_dir)
            team["seeding"] = base.commit  # a kill inside the swap is redone by the next sync
            _save_team(index_dir, team)
            old = IndexDir(index_dir).db
            trash = tmp / "old-db"
            if old.exists():
                os.replace(old, trash)
            os.replace(IndexDir(tmp).db, old)
            os.replace(IndexDir(tmp).state, IndexDir(index_dir).state)
            team.pop("seeding", None)
            _save_team(index_dir, team)
        return sum(base.files.values()), check
    except OSError as exc:
        raise RemoteError(f"snapshot {where}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fetch(fs, snap: str, rel: str, tmp: Path, size: int, sha256: str) -> None:
    """Copy one listed file, reading at most one byte past its listed size, and check size and hash."""
    import pyarrow.fs as pafs

    src, dest = f"{snap}/{rel}", tmp / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    got = 0
    try:
        info = fs.get_file_info(src)
        if info.type != pafs.FileType.File:
            raise BaseRejected(f"{rel} is listed but missing")
        if info.size is not None and info.size != size:  # the listing says so already: nothing to download
            raise BaseRejected(f"{rel} is {info.size} bytes, the manifest says {size}")
        with fs.open_input_stream(src) as fh, open(dest, "wb") as out:
            while got <= size:
                block = fh.read(min(READ_BLOCK, size + 1 - got))
                if not block:
                    break
                got += len(block)
                h.update(block)
                out.write(block)
    except BaseRejected:
        raise
    except OSError as exc:
        raise RemoteError(str(exc)) from exc
    if got != size:
        raise BaseRejected(f"{rel} is {'more than ' if got > size else ''}{got} bytes, the manifest "
                           f"says {size}")
    if h.hexdigest() != sha256:
        raise BaseRejected(f"{rel} does not match its sha256 in the manifest")


def _sweep_downloads(index_dir: Path, older_than: float = 3600.0) -> None:
    """Remove downloads a killed run left behind (old enough that no live run still owns them)."""
    now = time.time()
    for p in index_dir.glob(f"{DOWNLOAD_PREFIX}*"):
        try:
            if now - p.stat().st_mtime > older_than:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass


def say(message: str | None) -> None:
    """Print a notice on stderr (hooks send it to hippo.log)."""
    if message:
        print(message, file=sys.stderr)
