"""The program the SSH source runs on the remote box, next to the data.

It is not imported there: eagle3_tui/sources/agent_client.py sends this file's text, followed by
a call to main() with the source of eagle3_tui/engines/ modules, over the stdin of
`<remote python> -c <bootstrap>`. So this module must run on a bare Python (3.8+) with only the
standard library; torch is imported on first need by the shipped samples code.

Protocol, JSON lines both ways. The agent first prints one line
    EAGLE3-AGENT {"protocol": 1, "python": "3.11.7", "torch": "2.13.0" | null,
                  "tokenizers": "0.22.1" | null, ...}
(after whatever a login script printed), then answers requests {"id": n, "op": ..., ...}:
    ls        {"path", "page"}           -> {"id", "page": [[name, kind, size, mtime], ...]} ...
                                            then {"id", "page": [...], "done": true}
    stat      {"path"}                   -> {"id", "entry": [name, kind, size, mtime]}
    summarize {"path", "k", "slots", "hidden", "tokenizer", "model"}  -> {"id", "result": {...}}
    compare   {"a", "b", "slots", "hidden", "tokenizer", "model"}     -> {"id", "result": {...}}
              ("model": a model folder on the box whose run identifies the slots, or absent)
              ("tokenizer": a tokenizer.json or model folder on the box, or null; only sent
              when the hello said the box has the tokenizers package)
    identify  {"path", "model", "drafter", "tokens", "device", "ids_from", "slots", "hidden"}
                                                 -> {"id", "result": {...}}
    accept    {"path", "drafter", "model", "steps", "all_rows", "order", "ids_from"} -> {"id", "result": {...}}
    pair_print {"path", "widths"}        -> {"id", "result": {"n", "ids", "pos", "rows"}} (engines/scan/pairprint.py)
    serve_live {"root", "model", "drafter", "engine", "python", "accept", "timeout"}
                                         -> {"id", "result": serve-check --live's report or {"engine", "error"}}
                                            (engines/live/check.py: the engine run in its own Python)
    check_folders {"model", "drafter"}   -> {"id", "result": {"problems": {"model"|"drafter": line}}}
                                            (engines/model/folder_check.py, the TUI's start-up check)
    scan      {"path", "full", "rows", "budget", "workers", "vocab_mapping", "pair", "known": [[rel, size, mtime, variant], ...],
               "drafter": [drafter folder, model folder or null] or null}
              (a drafter folder that does not load: {"id", "page": [], "drafter_error", "done"})
                                         -> {"id", "page": [record, ...], "progress": {...}} ...
                                            then {"id", "page": [...], "progress", "done": true}
    cancel    {"target": id}             (no answer; the target answers when it stops)
A pickle is refused unread when the box's torch is below 2.10 (engines/read/torch_gate.py), unless
the client started the agent with main(modules, trust_data=True) (--trust-data).
Failures: {"id", "oserror": [errno, strerror]} for file system errors, {"id", "unusable": msg}
when the shipped code cannot run here (no torch, too old a Python), {"id", "error": msg} otherwise.
File names travel only inside these lines; the agent and every process it started end when its
stdin closes, on SIGHUP/SIGTERM, and when its parent (the SSH session) ends.
"""

import importlib.abc
import importlib.util
import json
import os
import shutil
import signal
import stat as stat_mod
import sys
import tempfile
import threading
import time

PROTOCOL = 1
HELLO = "EAGLE3-AGENT"


def install_modules(modules):
    """Make the shipped modules importable: {name: [is_package, source]} -> sys.meta_path."""
    class ShippedSource(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name not in modules:
                return None
            spec = importlib.util.spec_from_loader(name, self, is_package=modules[name][0])
            spec.has_location = False
            return spec

        def create_module(self, spec):
            return None

        def get_source(self, name):  # what engines/live/run.py sends to the engine's own Python
            return modules[name][1]

        def exec_module(self, module):
            is_package, source = modules[module.__name__]
            filename = module.__name__.replace(".", "/") + ("/__init__.py" if is_package else ".py")
            exec(compile(source, "<eagle3-agent>/" + filename, "exec"), module.__dict__)

    # First, so that a different eagle3_tui installed on the box never shadows the shipped code.
    sys.meta_path.insert(0, ShippedSource())
    SHIPPED.update(modules)


#: the shipped modules (install_modules): written out as files when a scan goes to Ray's workers
SHIPPED = {}  # type: dict[str, list]  # name -> [is_package, source]


def shipped_package():
    """A temp folder holding the shipped eagle3_tui as files, for Ray to send to its workers
    (ray.init packs it: the caller removes it after); None when the package was imported from
    files (then Ray takes those)."""
    if not SHIPPED:
        return None
    top = tempfile.mkdtemp(prefix="eagle3-agent-")
    for name, (is_package, source) in SHIPPED.items():
        path = os.path.join(top, *name.split(".")) + ("/__init__.py" if is_package else ".py")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
    return os.path.join(top, "eagle3_tui")


def module_version(name):
    """The installed version of `name` on this box, None when it is not installed."""
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except (ImportError, ValueError):  # a broken or blocked install is no install
        return None
    try:
        # lazy: importlib.metadata is Python 3.8+; an older box's agent must start to say it is too old
        from importlib import metadata

        return metadata.version(name)
    except Exception:
        return "unknown"


def entry_from_stat(name, st):
    """[name, kind, size, mtime] as in sources.base.Entry; st None means a dead link."""
    if st is None:
        return [name, "link", None, None]
    if stat_mod.S_ISDIR(st.st_mode):
        return [name, "dir", None, st.st_mtime]
    if stat_mod.S_ISREG(st.st_mode):
        return [name, "file", st.st_size, st.st_mtime]
    return [name, "other", None, st.st_mtime]


def scan_entry(d):
    try:
        st = d.stat()
    except OSError:
        st = None
    return entry_from_stat(d.name, st)


def with_text(result, tokenizer):
    if not tokenizer:
        return result
    # lazy: the shipped modules import only once install_modules ran
    from eagle3_tui.engines.read.tokens import annotate

    return annotate(result, tokenizer)


class Agent:
    def __init__(self, out):
        self._out = out
        self._write_lock = threading.Lock()
        self._cancels = {}

    def send(self, obj):
        line = json.dumps(obj, separators=(",", ":")).encode("ascii") + b"\n"
        with self._write_lock:
            self._out.write(line)
            self._out.flush()

    def serve(self, stdin):
        for raw in stdin:
            try:
                req = json.loads(raw)
            except ValueError:
                continue
            if req.get("op") == "cancel":
                event = self._cancels.get(req.get("target"))
                if event is not None:
                    event.set()
                continue
            event = threading.Event()
            self._cancels[req["id"]] = event
            # A thread per request: a long summary never holds up a listing (concurrent.futures
            # would cost ~15 ms of start-up on every connection).
            threading.Thread(target=self.handle, args=(req, event), daemon=True).start()

    def handle(self, req, cancel):
        rid = req["id"]
        try:
            op = getattr(self, "op_" + str(req.get("op")), None)
            if op is None:
                self.send({"id": rid, "error": "unknown request %r" % req.get("op")})
            else:
                op(rid, req, cancel)
        except OSError as err:
            self.send({"id": rid, "oserror": [err.errno, err.strerror or type(err).__name__]})
        except (ImportError, SyntaxError) as err:
            self.send({"id": rid, "unusable": "%s: %s" % (type(err).__name__, err)})
        except BaseException as err:  # one bad request must not end the agent
            self.send({"id": rid, "error": "%s: %s" % (type(err).__name__, err)})
        finally:
            self._cancels.pop(rid, None)

    def op_ls(self, rid, req, cancel):
        page_size = max(1, int(req.get("page") or 1000))
        page = []
        with os.scandir(req["path"]) as it:
            for d in it:
                if cancel.is_set():
                    break
                page.append(scan_entry(d))
                if len(page) >= page_size:
                    self.send({"id": rid, "page": page})
                    page = []
        self.send({"id": rid, "page": page, "done": True})

    def op_stat(self, rid, req, cancel):
        path = req["path"]
        name = os.path.basename(path.rstrip("/")) or path
        try:
            st = os.stat(path)
        except FileNotFoundError:
            os.lstat(path)  # a dead link is an entry; anything else raises the real error
            st = None
        self.send({"id": rid, "entry": entry_from_stat(name, st)})

    def op_summarize(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.read.stats import summarize_file

        kw = {"k": req.get("k", 5), "slots": req.get("slots"), "hidden": req.get("hidden"), "cancel": cancel}
        if req.get("model"):
            from eagle3_tui.engines.model.identify import summarize_identified

            result = summarize_identified(req["path"], req["model"], **kw)
        else:
            result = summarize_file(req["path"], **kw)
        self.send({"id": rid, "result": with_text(result, req.get("tokenizer"))})

    def op_compare(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.compare import compare_files

        result = compare_files(
            req["a"], req["b"], slots=req.get("slots"), hidden=req.get("hidden"), cancel=cancel,
            model=req.get("model"),
        )
        self.send({"id": rid, "result": with_text(result, req.get("tokenizer"))})

    def op_identify(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.model.identify import identify_file

        keys = ("drafter", "tokens", "device", "ids_from", "slots", "hidden")
        opts = {k: req[k] for k in keys if req.get(k) is not None}
        result = identify_file(req["path"], req["model"], cancel=cancel, **opts)
        self.send({"id": rid, "result": result})

    def op_accept(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.model.accept import accept_file

        result = accept_file(
            req["path"], req["drafter"], model=req.get("model"), steps=int(req.get("steps") or 3),
            all_rows=bool(req.get("all_rows")), order=req.get("order"), cancel=cancel,
            **({"ids_from": req["ids_from"]} if req.get("ids_from") else {}),
        )
        self.send({"id": rid, "result": result})

    def op_serve_live(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.live.check import LiveError, live_check

        try:
            result = live_check(req["root"], model=req["model"], drafter=req["drafter"], engine=req["engine"],
                                python=req.get("python"), accept=int(req.get("accept") or 0),
                                timeout=float(req.get("timeout") or 900), cancel=cancel)
        except LiveError as err:
            result = {"engine": req["engine"], "error": str(err)}
        self.send({"id": rid, "result": result})

    def op_check_folders(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.model.folder_check import check_folders

        self.send({"id": rid, "result": {"problems": check_folders(req.get("model"), req.get("drafter"))}})

    def op_pair_print(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.scan.pairprint import capture_print

        self.send({"id": rid, "result": capture_print(req["path"], [int(w) for w in req.get("widths") or []])})

    def op_scan(self, rid, req, cancel):
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.scan.options import ScanOptions
        from eagle3_tui.engines.scan.records import scan_tree

        known = {k[0]: tuple(k[1:]) for k in req.get("known") or []}
        options = ScanOptions.from_request(req)
        drafter = options.drafter_pair
        if drafter is not None:  # loaded here once; the scan's forked workers inherit it
            from eagle3_tui.engines.scan.agreement import check_drafter

            problem = check_drafter(*drafter)
            if problem is not None:
                self.send({"id": rid, "page": [], "drafter_error": problem, "done": True})
                return
        executor = None
        if req.get("ray"):  # scan box:/data --ray: the box's own Ray cluster reads the files
            from eagle3_tui.engines.scan.ray_tasks import RayScan, RayUnavailable, connect

            package = shipped_package()
            try:
                executor = RayScan(connect(req["ray"], package=package, quiet=True),
                                   local_roots=bool(req.get("ray_local_roots")), batch=req.get("ray_batch"))
            except RayUnavailable as err:
                self.send({"id": rid, "page": [], "ray_error": str(err), "done": True})
                return
            finally:  # packed and sent by ray.init (a second scan finds Ray connected)
                if package is not None:
                    shutil.rmtree(os.path.dirname(package), ignore_errors=True)
        progress = {}
        page = []
        sent = time.monotonic()

        def on_progress(state):
            progress["now"] = state.to_json()

        for record in scan_tree(
            req["path"], full=options.full, rows=options.rows, budget=options.budget, workers=options.workers,
            cancel=cancel, known=known, progress=on_progress, drafter=drafter, vocab_mapping=options.vocab_mapping,
            executor=executor, pair=options.pair,
        ):
            page.append(record)
            if len(page) >= 200 or time.monotonic() - sent >= 0.25:
                self.send({"id": rid, "page": page, "progress": progress.get("now")})
                page = []
                sent = time.monotonic()
        self.send({"id": rid, "page": page, "progress": progress.get("now"), "done": True})


def end_children():
    """Stop every process this agent started (the scan's pool workers): nobody will read them."""
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return
    for child in mp.active_children():
        try:
            child.kill()
        except Exception:
            pass


def leave(*_):
    """The channel is gone (stdin's EOF, SIGHUP, SIGTERM, the parent ended): end the children, then us."""
    end_children()
    os._exit(0)


def watch_parent(tick=0.5):
    """sshd's session process (or the shell it ran) was killed: we were re-parented, the channel is gone."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(tick)
    leave()


def main(modules, trust_data=False):
    install_modules(modules)
    try:  # the gate in front of every torch.load (engines/read/torch_gate.py) speaks of the box
        # lazy: the shipped modules import only once install_modules ran
        from eagle3_tui.engines.read import torch_gate

        torch_gate.on_box()
        torch_gate.trust_data(trust_data)  # --trust-data on the command line that started this agent
    except (ImportError, SyntaxError):  # too old a Python: the client computes locally
        pass
    for name in ("SIGHUP", "SIGTERM"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), leave)
    threading.Thread(target=watch_parent, daemon=True).start()
    out = sys.stdout.buffer
    # Anything else that writes to stdout would corrupt the protocol: send it to stderr.
    sys.stdout = sys.stderr
    agent = Agent(out)
    hello = {
        "protocol": PROTOCOL,
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "torch": module_version("torch"),
        "tokenizers": module_version("tokenizers"),
        "pid": os.getpid(),
    }
    out.write((HELLO + " " + json.dumps(hello) + "\n").encode("ascii"))
    out.flush()
    stdin = sys.stdin.buffer
    # The protocol owns stdin. A forked worker (scan's process pool) closes sys.stdin as it
    # starts; were that the object the main thread is blocked reading, it would wait forever
    # for the reader's lock.
    sys.stdin = open(os.devnull)
    try:
        agent.serve(stdin)
    finally:
        # stdin closed: the channel is gone, nobody will read what running requests produce.
        leave()
