"""Whether this process may unpickle a file at all: the one gate in front of every torch.load.

torch.load(..., weights_only=True) is only as safe as the torch that runs it. Releases below 2.10
have known escapes from the weights_only unpickler (CVE-2025-32434: code execution up to 2.5.1;
CVE-2026-24747: memory corruption below 2.10). The package asks for torch>=2.10, but that holds
only where eagle3-tui is installed: the agent on an SSH box runs with the box's Python and torch,
and an environment installed without dependency resolution can hold an older one here too.

So every path that unpickles (engines/read/load.py's one torch.load door, the quick scan's
structure read in engines/scan/budget.py) calls `check()` first: below 2.10 it raises UnsafeTorch
with one line saying why and what to do, and torch.load is never reached. safetensors files run
no unpickler and are read as always. `--trust-data` (trust_data(True), set by the command line
only, never remembered) lets an older torch load anyway; results then say the loads were unsafe.

Standard library only (shipped to the box with the engines; the agent imports it on start).
"""

from __future__ import annotations

import functools
import re
import sys

from eagle3_tui.engines.read.sample import SampleError

#: the first torch release without a known weights_only escape (the package's own requirement)
SAFE_TORCH = (2, 10)
CVES = "CVE-2025-32434, CVE-2026-24747"
#: words every refusal holds: how a result (or a record sent by the agent) is known refused
REFUSAL = "cannot load .pt files safely"

_state = {"trust": False, "where": "this Python's", "fix": "install torch>=2.10 in it, or run eagle3-tui with a Python that has it"}
BOX = ("the box's", "install torch>=2.10 there, or point --remote-python at a Python that has it")


class UnsafeTorch(SampleError):
    """This process's torch is below SAFE_TORCH and --trust-data was not given: nothing unpickled."""


def trust_data(on: bool = True) -> None:
    """--trust-data: load pickles even with an unsafe torch (the command line sets it, per run)."""
    _state["trust"] = bool(on)


def trusted() -> bool:
    return bool(_state["trust"])


def on_box() -> None:
    """The agent says so on start: messages speak of the box's torch and --remote-python."""
    _state["where"], _state["fix"] = BOX


#: PEP 440's version syntax (the regex of its Appendix B, as packaging.version has it); the box's
#: Python may have no packaging, so the gate compares by it here
_PEP440 = re.compile(r"""
    v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?
    (?P<post>-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?
    (?P<dev>[-_.]?dev[-_.]?[0-9]*)?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
""", re.VERBOSE | re.IGNORECASE)


@functools.lru_cache(maxsize=32)  # asked before every file a scan reads, of the same version
def safe_version(version: str | None) -> bool:
    """Whether a torch version is at least 2.10 in PEP 440's order, as pip's torch>=2.10 says:
    a pre-release or dev release of 2.10 comes before it (2.10.0rc1, 2.10.0.0a1,
    2.10.0.0.dev20250101), a post release after it, a local label (+cpu) does not matter, an
    epoch (1!0.1) is later than any version without one. What is not a PEP 440 version
    ("2.10.0 rc1", "2.10.0~rc1", "unknown") counts as too old."""
    found = _PEP440.fullmatch((version or "").strip())
    if not found:
        return False
    if int(found["epoch"] or 0) > 0:
        return True
    release = [int(part) for part in found["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:  # 2.10.0.0 is 2.10
        release.pop()
    if tuple(release) != SAFE_TORCH:
        return tuple(release) > SAFE_TORCH
    # 2.10 itself: its pre-releases and a dev release before it (2.10.dev1) come first;
    # 2.10.post1.dev1 comes after 2.10
    return found["pre"] is None and (found["dev"] is None or found["post"] is not None)


def problem(version: str | None, where: str | None = None, fix: str | None = None) -> str | None:
    """The one line that says a torch `version` cannot unpickle safely, or None when it can (or
    when there is no torch: nothing is unpickled by it then)."""
    if version is None or safe_version(version):
        return None
    return (f"{where or _state['where']} torch {version} {REFUSAL} ({CVES}): {fix or _state['fix']} "
            "(--trust-data loads them anyway, for files you made yourself)")


def refused(text: str | None) -> bool:
    """Whether an error line is this gate's refusal (in a result, a record, the agent's reply)."""
    return bool(text) and REFUSAL in (text or "")


def torch_version() -> str | None:
    """The running torch's own version (torch.__version__, what it reports once imported)."""
    torch = sys.modules.get("torch")
    # a torch another thread is still importing is in sys.modules without its __version__ yet (the
    # TUI's and serve-check's workers import it side by side): the import waits for that one
    if torch is None or not hasattr(torch, "__version__"):
        try:
            # lazy: torch: loaded when used, never at start-up
            import torch
        except ImportError:
            return None
    return str(getattr(torch, "__version__", "unknown"))


def check(quiet: bool = False) -> None:
    """Called right before every torch.load: raises UnsafeTorch unless this torch is safe or the
    user passed --trust-data. quiet: an early check that must not import torch (a gzip is refused
    before it is expanded, while the sniff of a bad file needs no torch): the installed version
    decides there, the imported one again right before torch.load."""
    if _state["trust"]:
        return
    line = problem(_quiet_version() if quiet else torch_version())
    if line is not None:
        raise UnsafeTorch(line)


def pickles_allowed() -> bool:
    """check() without raising: for a loader that is not ours (transformers' from_pretrained,
    which then must take safetensors only)."""
    return bool(_state["trust"]) or problem(torch_version()) is None


def unsafe_note(torch: str | None = None) -> str:
    """What every JSON result says with --trust-data."""
    which = f"torch {torch}" if torch else "this torch"
    return (f"--trust-data: .pt files were loaded with {which} without the torch>=2.10 check "
            f"({CVES}); not safe against crafted files")


def runtime(computed: str, python: str | None = None, executable: str | None = None,
            torch: str | None = None) -> dict:
    """Which Python and torch read the files, and what was done with pickles: "loaded safely",
    "refused" (torch below 2.10) or "loaded unsafely (--trust-data)"."""
    if python is None:
        python, executable, torch = "%d.%d.%d" % sys.version_info[:3], sys.executable, _quiet_version()
    if torch is None:
        pickles = "not loaded (no torch)"
    elif safe_version(torch):
        pickles = "loaded safely"
    else:
        pickles = "loaded unsafely (--trust-data)" if _state["trust"] else "refused (torch below 2.10)"
    return {"computed": computed, "python": python, "executable": executable, "torch": torch, "pickles": pickles}


def _quiet_version() -> str | None:
    """This process's torch version without importing torch (startup never imports it): the
    module's own when imported, else its installed metadata."""
    if "torch" in sys.modules:
        return torch_version()
    return _installed_torch()


@functools.lru_cache(maxsize=1)
def _installed_torch() -> str | None:
    try:
        # lazy: optional: the ImportError is handled here
        from importlib import metadata

        return metadata.version("torch")
    except Exception:
        return None
