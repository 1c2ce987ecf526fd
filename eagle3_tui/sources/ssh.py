"""A folder on an SSH host as a Source.

Listing, stat, summarise and compare go to a long-lived agent on the box (sources/agent.py), so
only summaries cross the network. Starting the agent costs the login shell and a Python start
(~0.3 s here), so a folder listed before it runs is listed over SFTP, which needs neither; the
agent starts when that listing ends (not during it: on a loaded machine both would slow down), or
at once when anything else needs it, and lists from then on. If the box has no usable Python, listing uses SFTP; if it has
no torch (or cannot run the shipped code), files are fetched over SFTP into the local cache and
computed here with the same code. Each is said once through on_status. The connection, the
agent and the retry rule are in ssh_session.py.

Dropped connections: idempotent operations (all of them: the tool never writes to the box) are
retried after reconnecting with backoff. A listing that already handed out pages is not
restarted (that would duplicate entries); it fails, and the next call reconnects.
"""

from __future__ import annotations

import asyncio
import errno as errno_mod
import os
import posixpath
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import asyncssh

from eagle3_tui.engines.read.tokens import TOKENIZER_FILE
from eagle3_tui.engines.results.accept import AcceptResult
from eagle3_tui.engines.results.compare import ComparisonResult, SideHeader
from eagle3_tui.engines.results.errors import error_result
from eagle3_tui.engines.results.findings import finding
from eagle3_tui.engines.results.host import FolderCheck
from eagle3_tui.engines.results.identify import IdentifyOptions, IdentifyResult
from eagle3_tui.engines.results.live import LiveReport
from eagle3_tui.engines.results.scan import CapturePrint, ScanProgressItem, ScanRecord
from eagle3_tui.engines.results.summary import Summary
from eagle3_tui.engines.scan.options import DEFAULT_BUDGET, DEFAULT_ROWS
from eagle3_tui.sources import sftp_fallback
from eagle3_tui.sources.agent_client import AgentError
from eagle3_tui.sources.base import Entry, Progress, SourceError
from eagle3_tui.sources.local import EngineResult, LocalSource, os_error_message
from eagle3_tui.sources.ssh_session import (  # noqa: F401 - re-exported for callers
    DROPPED,
    FILE_PROBLEMS,
    KIND_PROBLEMS,
    MIN_REMOTE_PYTHON,
    ConnectionGone,
    PathError,
    SshSession,
)
from eagle3_tui.sources.sshconnect import ConnectError
from eagle3_tui.sources.tokenizer import with_token_text

if TYPE_CHECKING:
    from typing import Unpack

#: the results the box may leave for this machine to decode
_Decoded = TypeVar("_Decoded", Summary, ComparisonResult)
#: what an agent's request answers: an engine's result, a capture's print, the folders' problems
_Answer = TypeVar("_Answer", Summary, ComparisonResult, IdentifyResult, AcceptResult, CapturePrint, FolderCheck,
                   LiveReport)


class SshSource(SshSession):
    """A folder on an SSH host (see the module docstring)."""

    #: scan --ray ADDRESS with this box: the box's own Ray cluster reads the files (the agent
    #: connects to it at ADDRESS, "auto": the cluster the box belongs to); see commands/_ray.py
    ray: str | None = None
    ray_local_roots: bool = False
    ray_batch: int | None = None

    # -- listing and stat ------------------------------------------------------------------

    async def list_pages(self, path: str, page_size: int = 1000) -> AsyncIterator[list[Entry]]:
        delivered = False
        tries = 0
        while True:
            try:
                await self._ensure(agent=False)
                async for page in self._pages(path, page_size):
                    delivered = True
                    yield page
                self._kick_agent()
                return
            except DROPPED:
                self._forget()
                if delivered:  # restarting would hand out the first pages twice
                    raise ConnectionGone(f"{self.where}: connection lost while listing {path}") from None
            except OSError as err:
                raise PathError(os_error_message(self._show(path), err)) from None
            except ConnectError as err:
                if not self._retryable(err):
                    raise
            tries = await self._after_drop(tries, f"listing {path}")

    async def _pages(self, path: str, page_size: int) -> AsyncIterator[list[Entry]]:
        # While the agent starts, SFTP lists: no login shell and no Python start to wait for.
        if self._agent is not None:
            try:
                async for reply in self._agent.stream("ls", path=path, page=page_size):
                    if reply["page"]:
                        yield [Entry(*e) for e in reply["page"]]
            except AgentError as err:
                raise _as_oserror(err) from None
        else:
            sftp = await self._sftp_client()
            async for page in sftp_fallback.list_pages(sftp, path, page_size):
                yield page

    async def _stat(self, path: str) -> Entry:
        """Entry for `path`; file problems raise OSError, connection problems SourceError."""

        async def attempt() -> Entry:
            if self._agent is not None:
                try:
                    return Entry(*(await self._agent.call("stat", path=path))["entry"])
                except AgentError as err:
                    raise _as_oserror(err) from None
            return await sftp_fallback.stat(await self._sftp_client(), path)

        return await self._retrying(f"reading {path}", attempt)

    async def stat(self, path: str) -> Entry:
        try:
            return await self._stat(path)
        except OSError as err:
            raise PathError(os_error_message(self._show(path), err)) from None

    def _show(self, path: str) -> str:
        return self.target.with_path(path).display()

    # -- numbers ---------------------------------------------------------------------------

    async def summarize(
        self, path: str, *, k: int = 5, slots: int | None = None, hidden: int | None = None,
        tokenizer: str | None = None, model: str | None = None,
    ) -> Summary:
        args = {"path": path, "k": k, "slots": slots, "hidden": hidden}
        await self._retrying(f"summarising {path}", self._ensure)  # the agent's hello decides below
        if self._decodes_here(tokenizer):
            args["tokenizer"] = tokenizer
        if model:
            args["model"] = model
        remote = await self._remote(Summary, "summarize", f"summarising {path}", args)
        if remote is not None:
            return await self._with_text(remote, tokenizer, "tokenizer" in args)
        local = await self._local_copy(path)
        if isinstance(local, str):
            return {**error_result(path, local, computed="local")}
        result = await LocalSource().summarize(str(local), k=k, slots=slots, hidden=hidden)
        if model:  # the model lives on the box: the copy here is summarised, not identified
            result["identify"] = {"model": model, "error": self._no_model_run()}
        return await self._with_text(_restore_paths(result, {str(local): path}), tokenizer, False)

    async def check_folders(self, model: str | None, drafter: str | None) -> dict[str, str]:
        """On the box, by the agent; {} when it cannot run there (they are checked when used)."""
        result = await self._remote(FolderCheck, "check_folders", "checking the model and drafter folders",
                                    {"model": model, "drafter": drafter})
        return dict(result.get("problems") or {}) if result is not None else {}

    async def pair_print(self, path: str, widths: list[int]) -> CapturePrint:
        remote = await self._remote(CapturePrint, "pair_print", f"reading {path}", {"path": path, "widths": widths})
        if remote is not None:
            return remote
        local = await self._local_copy(path)
        if isinstance(local, str):
            return {**error_result(path, local, computed="local")}
        result = await LocalSource().pair_print(str(local), widths)
        result["path"] = path
        return result

    async def compare(
        self, a: str, b: str, *, slots: int | None = None, hidden: int | None = None,
        tokenizer: str | None = None, model: str | None = None,
    ) -> ComparisonResult:
        args = {"a": a, "b": b, "slots": slots, "hidden": hidden}
        await self._retrying(f"comparing {a} and {b}", self._ensure)
        if self._decodes_here(tokenizer):
            args["tokenizer"] = tokenizer
        if model:
            args["model"] = model
        remote = await self._remote(ComparisonResult, "compare", f"comparing {a} and {b}", args)
        if remote is not None:
            return await self._with_text(remote, tokenizer, "tokenizer" in args)
        local_a, local_b = await self._local_copy(a), await self._local_copy(b)
        if isinstance(local_a, str) or isinstance(local_b, str):
            # the shape compare_files gives when a side cannot be loaded
            side_a = {**error_result(a, local_a)} if isinstance(local_a, str) else {"path": a}
            side_b = {**error_result(b, local_b)} if isinstance(local_b, str) else {"path": b}
            error = "; ".join(f"{name} {side['path']}: {side['error']}"
                              for name, side in (("A", side_a), ("B", side_b)) if "error" in side)
            # an error result stands in for the header of the side that cannot be loaded
            return {"a": cast(SideHeader, side_a), "b": cast(SideHeader, side_b), "error": error, "computed": "local"}
        result = await LocalSource().compare(str(local_a), str(local_b), slots=slots, hidden=hidden)
        if model:  # the model lives on the box: the copies here are compared, not identified
            result["identified"] = {"model": model, "error": self._no_model_run()}
            result.setdefault("findings", []).append(finding(
                "identify_failed", "warning",
                f"--model {model}: {self._no_model_run()}: the boundaries are not identified", model=model))
        return await self._with_text(_restore_paths(result, {str(local_a): a, str(local_b): b}), tokenizer, False)

    # -- token text ------------------------------------------------------------------------

    def _decodes_here(self, tokenizer: str | None) -> bool:
        """Whether the box decodes: its agent computes and its Python has `tokenizers`."""
        return bool(tokenizer) and self._agent is not None and self._remote_compute and bool(
            self._agent.hello.get("tokenizers"))

    async def _with_text(self, result: _Decoded, tokenizer: str | None, decoded: bool) -> _Decoded:
        """Token text decoded here, with the box's tokenizer.json fetched once into the cache,
        when the box could not decode it itself."""
        if not tokenizer or decoded or "error" in result:
            return result
        try:
            local = await self._tokenizer_copy(tokenizer)
        except OSError as err:
            problem = FILE_PROBLEMS.get(err.errno or 0, err.strerror or str(err))
            result["text_error"] = f"tokenizer {self._show(tokenizer)}: {problem}"
            return result
        except SourceError as err:
            result["text_error"] = f"tokenizer {self._show(tokenizer)}: {err}"
            return result

        result = await asyncio.to_thread(with_token_text, result, str(local))
        if result.get("tokenizer"):
            result["tokenizer"] = self._show(tokenizer)
        return result

    async def _tokenizer_copy(self, path: str) -> Path:
        entry = await self._stat(path)
        if entry.kind == "dir":
            path = posixpath.join(path, TOKENIZER_FILE)
            entry = await self._stat(path)
        if entry.kind != "file":
            raise SourceError(KIND_PROBLEMS.get(entry.kind, "not a file"))
        return await self.cached_copy(path, entry)

    async def identify(self, path: str, *, model: str, **options: Unpack[IdentifyOptions]) -> IdentifyResult:
        # The model lives on the box: without torch there, there is nothing to fall back to.
        remote = await self._remote(IdentifyResult, "identify", f"identifying {path}",
                                    {"path": path, "model": model, **options})
        if remote is not None:
            if "error" in remote:
                remote.setdefault("model", model)
            return remote
        return {"path": path, "model": model, "computed": "local", **error_result(path, self._no_model_run())}

    def _no_model_run(self) -> str:
        why = "no agent" if self._agent is None else "no usable torch"
        return (f"cannot run the model on {self.target.host} ({why} there): identify runs next to "
                "the model and needs torch and transformers on that box (pip install eagle3-tui[model])")

    async def accept(
        self, path: str, drafter: str, *, model: str | None = None, steps: int = 3, all_rows: bool = False,
        order: list[int] | None = None, ids_from: str | None = None,
    ) -> AcceptResult:
        args = {"path": path, "drafter": drafter, "model": model, "steps": steps, "all_rows": all_rows,
                "order": order, **({"ids_from": ids_from} if ids_from else {})}
        remote = await self._remote(AcceptResult, "accept", f"running the drafter on {path}", args)
        if remote is not None:
            remote.setdefault("drafter", drafter)
            return remote
        # No SFTP fallback: a drafter (and its target's embedding) can be gigabytes; it runs where it is.
        return {"path": path, "drafter": drafter, "computed": "local",
                **error_result(path, f"cannot run the drafter on {self.target.host}: no usable Python with torch "
                                     "there (see --remote-python)")}

    async def serve_live(self, root: str, *, model: str, drafter: str, engine: str, python: str | None = None,
                         accept: int = 0, timeout: float = 900.0,
                         progress: Callable[[str], None] = lambda _s: None) -> LiveReport:
        progress(f"running {engine} on {self.target.host} (its progress stays there; time limit {timeout:.0f} s)")
        args = {"root": root, "model": model, "drafter": drafter, "engine": engine, "python": python,
                "accept": accept, "timeout": timeout}
        remote = await self._remote(LiveReport, "serve_live", f"running {engine} on {root}", args)
        if remote is not None:
            return remote
        return {"engine": engine, "error": f"cannot run {engine} on {self.target.host}: no usable Python with torch "
                                           "there (see --remote-python)"}

    async def scan(
        self, path: str, *, full: bool = False, rows: int = DEFAULT_ROWS, budget: int = DEFAULT_BUDGET,
        workers: int | None = None,
        known: dict[str, tuple] | None = None, drafter: tuple[str, str | None] | None = None,
        vocab_mapping: str | None = None, pair: bool = False,
    ) -> AsyncIterator[ScanRecord | ScanProgressItem]:
        # Fetching 100,000 files over SFTP to scan them here is no answer: scanning runs on the box.
        await self._retrying(f"scanning {path}", self._ensure)
        if self._agent is None or not self._remote_compute:
            python = self._agent.hello.get("python") if self._agent is not None else None
            why = "no usable Python" if self._agent is None else (
                "no torch" if not self._agent.hello.get("torch") else f"Python {python}, too old")
            raise SourceError(
                f"{self.where}: scanning a dataset runs on the box and needs Python 3.9+ with torch there "
                f"({self.remote_python!r} has {why}); install torch there or pass --remote-python"
            )
        known_list = [[rel, *k] for rel, k in (known or {}).items()]
        try:
            async for reply in self._agent.stream(
                "scan", path=path, full=full, rows=rows, budget=budget, workers=workers, known=known_list,
                drafter=list(drafter) if drafter is not None else None,
                vocab_mapping=vocab_mapping, pair=pair,
                **({"ray": self.ray, "ray_local_roots": self.ray_local_roots, "ray_batch": self.ray_batch}
                   if self.ray else {}),
            ):
                if reply.get("ray_error"):
                    raise SourceError(f"{self.where}: --ray: {reply['ray_error']}")
                if reply.get("drafter_error"):
                    raise SourceError(f"{self.where}: --drafter: {reply['drafter_error']}")
                for record in reply["page"]:
                    if not record.get("cached"):
                        record["computed"] = "remote"
                    yield record
                if reply.get("progress"):
                    yield {"progress": reply["progress"]}
        except AgentError as err:
            if err.unusable:
                raise SourceError(f"{self.where}: cannot scan on the box ({err})") from None
            raise PathError(os_error_message(self._show(path), _as_oserror(err))) from None
        except DROPPED:
            self._forget()
            raise ConnectionGone(f"{self.where}: connection lost while scanning {path}") from None

    async def _remote(self, shape: type[_Answer], op: str, what: str, args: dict[str, Any]) -> _Answer | None:
        """The agent's answer, or None when this box cannot compute (then we compute here). The
        box runs the same engine (sources/agent.py): its JSON line is that engine's dict, `shape`
        (or {"path", "error"}, which every shape allows)."""

        async def attempt() -> _Answer | None:
            if self._agent is None or not self._remote_compute:
                return None
            try:
                reply = await self._agent.call(op, **args)
            except AgentError as err:
                if err.unusable:
                    self._remote_compute = False
                    self._status(f"cannot compute on {self.target.host} ({err}): computing locally", once=True)
                    return None
                path = args.get("path") or args.get("a") or ""
                return cast(_Answer, error_result(path, str(err), computed="remote"))
            result = reply["result"]
            result["computed"] = "remote"
            return cast(_Answer, result)

        return await self._retrying(what, attempt)

    async def _local_copy(self, path: str) -> Path | str:
        """A local cached copy of remote `path`, or why there is none in the words loading a
        local file would use for the same problem ("no such file", "permission denied", ...)."""
        try:
            entry = await self._stat(path)
        except OSError as err:
            return FILE_PROBLEMS.get(err.errno or 0, f"cannot read file: {err.strerror}")
        problem = KIND_PROBLEMS.get(entry.kind)
        if problem is not None:
            return problem
        try:
            return await self.cached_copy(path, entry)
        except PathError as err:
            return str(err)

    # -- files -----------------------------------------------------------------------------

    async def read_head(self, path: str, limit: int) -> tuple[bytes, int]:
        """Over SFTP (whether or not the agent runs): stat first, so a FIFO or device is never opened."""
        entry = await self.stat(path)
        problem = KIND_PROBLEMS.get(entry.kind) or (None if entry.kind == "file" else "not a regular file")
        if problem is not None:
            raise PathError(f"{self._show(path)}: {problem}")

        async def attempt() -> bytes:
            async with (await self._sftp_client()).open(path, "rb") as fh:
                return await fh.read(limit)

        try:
            return await self._retrying(f"reading {path}", attempt), entry.size or 0
        except asyncssh.SFTPError as err:
            raise PathError(os_error_message(self._show(path), sftp_fallback.oserror_from_sftp(err))) from None

    async def cached_copy(self, path: str, entry: Entry | None = None, progress: Progress | None = None) -> Path:
        """A local copy of remote file `path` in the cache (fetched unless size and mtime match)."""
        if entry is None:
            entry = await self.stat(path)
        dest = sftp_fallback.cache_path(self.where, path, entry.size, entry.mtime)
        if dest.is_file() and dest.stat().st_size == entry.size:
            return dest
        await self.fetch(path, dest, progress)
        return dest

    async def fetch(self, path: str, dest: str | os.PathLike, progress: Progress | None = None) -> None:
        """Download remote `path` to local `dest` over SFTP (retried from the start after a drop)."""
        dest = Path(dest)
        self._status(f"fetching {path} from {self.target.host}…")

        async def attempt() -> None:
            await sftp_fallback.download(await self._sftp_client(), path, dest, progress)

        try:
            await self._retrying(f"fetching {path}", attempt)
        except asyncssh.SFTPError as err:
            raise PathError(
                os_error_message(self._show(path), sftp_fallback.oserror_from_sftp(err))
            ) from None
        except OSError as err:
            raise SourceError(f"cannot write {dest}: {err.strerror or err}") from None


def _as_oserror(err: AgentError) -> OSError:
    if err.errno is not None:
        return OSError(err.errno, str(err))
    return OSError(errno_mod.EIO, str(err))


def _restore_paths(result: EngineResult, cached_to_remote: dict[str, str]) -> EngineResult:
    """Results computed on cached copies name the remote files, as the agent's results do."""

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            for cached, remote in cached_to_remote.items():
                value = value.replace(cached, remote)
            return value
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {key: fix(v) for key, v in value.items()}
        return value

    return cast(EngineResult, fix(result))  # the same dict, its strings rewritten
