"""The errors loading raises (SampleError, NotASample, Cancelled) and the one shape of a file
that cannot be used: {"path", "error"} (+ "not_sample", "contents"), made by `error_result`,
whatever engine met it."""

from __future__ import annotations

from typing import Any, TypedDict, cast


class SampleError(Exception):
    """A file could not be read as a hidden-state sample. The message is one line for the user."""

class NotASample(SampleError):
    """A readable file that holds something other than hidden states (e.g. a vocab mapping)."""

    def __init__(self, message: str, contents: dict[str, str]):
        super().__init__(message)
        #: key -> "shape dtype" description, for showing what the file does contain
        self.contents = contents

class Cancelled(Exception):
    """The caller set the cancel event (a summary, a comparison, identify, accept or a scan stops)."""

class ErrorResult(TypedDict, total=False):
    path: str
    error: str  # one line for the user
    not_sample: bool  # a readable file holding something else (vocab_mapping.pt)
    contents: dict[str, str]  # key -> "shape dtype", for a non-sample
    computed: str  # "local" | "remote"

def error_result(path: str, error: BaseException | str, **extra: Any) -> ErrorResult:
    """{"path", "error", ...} for a file that cannot be used. From an exception: a NotASample
    carries "not_sample" and its "contents"; a MemoryError says so; anything that is not one of
    our own errors keeps its type in the message (a last resort: one line, never a traceback)."""
    out = cast(ErrorResult, {"path": path, **extra})  # extra: what the caller's own shape adds (a scan record's place)
    if isinstance(error, str):
        out["error"] = error
    elif isinstance(error, NotASample):
        out["error"], out["not_sample"], out["contents"] = str(error), True, error.contents
    elif isinstance(error, SampleError):
        out["error"] = str(error)
    elif isinstance(error, MemoryError):
        out["error"] = "out of memory while reading this file"
    else:
        text = str(error).strip()
        text = text.splitlines()[0][:200] if text else ""
        out["error"] = f"unexpected {type(error).__name__} while reading this file: {text}".rstrip(": ")
    return out
