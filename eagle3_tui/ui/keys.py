"""Every key of the app in one table: the screens bind these lists, the help screen lists
them and the command palette offers them, so a key, its help line and its palette entry
cannot drift apart.

A binding's `tooltip` is its help line and its palette title; its `id` marks it as the
app's own (Textual's built-in bindings have none and are left out of the palette).
Only textual.binding is imported here: the help screen and the palette read this table
without importing the screens.
"""

from __future__ import annotations

from textual.binding import Binding

KEY_NAMES = {
    "down": "↓", "up": "↑", "left": "←", "right": "→", "enter": "enter", "escape": "esc",
    "left_square_bracket": "[", "right_square_bracket": "]", "left_curly_bracket": "{",
    "right_curly_bracket": "}", "plus": "+", "minus": "-", "equals_sign": "=", "slash": "/",
    "question_mark": "?", "pagedown": "pgdn", "pageup": "pgup", "backspace": "backspace",
}


def key_text(keys: str) -> str:
    """A binding's keys as the user reads them: "left_square_bracket,shift+left" -> "[ shift+←"."""
    names = []
    for key in keys.split(","):
        key = key.strip()
        mods, _, base = key.rpartition("+")
        shown = KEY_NAMES.get(base, base)
        names.append(f"{mods}+{shown}" if mods else shown)
    return " ".join(names)


APP = [
    Binding("question_mark,f1", "help", "Help", key_display="?", id="app.help",
            tooltip="Help: this list of keys"),
    Binding("n", "step_sample(1)", "Next", id="app.next_sample",
            tooltip="Next sample file in this folder (from anywhere)"),
    Binding("p", "step_sample(-1)", "Prev", id="app.prev_sample",
            tooltip="Previous sample file in this folder (from anywhere)"),
    Binding("r", "reload", "Reload", show=False, id="app.reload",
            tooltip="Reload the folder and the sample shown"),
    Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit"),
]

MAIN = [
    Binding("t", "pin_training", "Pin A", show=False, id="main.pin_training",
            tooltip="Compare: pin this sample as the training side (A)"),
    Binding("i", "choose_inference", "Pick B", show=False, id="main.choose_inference",
            tooltip="Compare: choose this file as the inference side (B)"),
    Binding("c", "open_compare", "Compare", show=False, id="main.open_compare",
            tooltip="Compare: open the view, A with B or the file here"),
    Binding("P", "pair_capture", "Pair", show=False, id="main.pair_capture",
            tooltip="Compare: pair this capture and its training sample"),
    Binding("escape", "clear_filter", "Clear filter", show=False, id="main.clear_filter",
            tooltip="Stop P or I while they run, else clear the filter"),
    Binding("left_square_bracket,shift+left", "token(-1)", "Token", key_display="[ ]",
            id="sample.token_prev", tooltip="Token cursor one back"),
    Binding("right_square_bracket,shift+right", "token(1)", "Token", show=False,
            id="sample.token_next", tooltip="Token cursor one forward"),
    Binding("left_curly_bracket", "token(-16)", "Token -16", show=False,
            id="sample.token_prev16", tooltip="Token cursor 16 back"),
    Binding("right_curly_bracket", "token(16)", "Token +16", show=False,
            id="sample.token_next16", tooltip="Token cursor 16 forward"),
    Binding("plus,equals_sign", "k(1)", "k", key_display="+/-", id="sample.k_more",
            tooltip="Show one more first-k value per token"),
    Binding("minus", "k(-1)", "k", show=False, id="sample.k_fewer",
            tooltip="Show one fewer first-k value per token"),
    Binding("I", "identify", "Identify", show=False, id="main.identify",
            tooltip="Identify each slot's layer (needs --model)"),
    Binding("b", "toggle_bookmark", "Bookmark", show=False, id="main.bookmark",
            tooltip="Bookmark or unbookmark the sample under the cursor"),
    Binding("N", "bookmark_note", "Note", show=False, id="main.bookmark_note",
            tooltip="Add or edit the note of its bookmark"),
    Binding("B", "bookmarks", "Bookmarks", show=False, id="main.bookmarks",
            tooltip="Bookmarks: list, filter, edit, delete, jump to one"),
    Binding("D", "dataset", "Dataset", id="main.dataset",
            tooltip="Dataset view: scan the folder under the cursor"),
]

BROWSER = [
    Binding("j,down", "cursor_down", "Down", show=False, id="browser.down",
            tooltip="Move down"),
    Binding("k,up", "cursor_up", "Up", show=False, id="browser.up", tooltip="Move up"),
    Binding("g,home", "first", "First", show=False, id="browser.first",
            tooltip="First entry"),
    Binding("G,end", "last", "Last", show=False, id="browser.last", tooltip="Last entry"),
    Binding("pagedown,ctrl+d", "page_down", "Page down", show=False,
            id="browser.page_down", tooltip="One screen down"),
    Binding("pageup,ctrl+u", "page_up", "Page up", show=False, id="browser.page_up",
            tooltip="One screen up"),
    Binding("enter,l,right", "open", "Open", key_display="l", id="browser.open",
            tooltip="Open the folder, or load the file now (any name)"),
    Binding("h,backspace,left", "parent", "Up", key_display="h", id="browser.parent",
            tooltip="Up to the parent folder"),
    # on_key runs it first (see there); the binding puts it in the footer and help
    Binding("slash", "screen.filter", "Filter", id="browser.filter",
            tooltip="Filter this folder by name (incremental)"),
]

COMPARE = [
    Binding("escape", "back", "Back", key_display="esc", id="compare.back",
            tooltip="Cancel a running comparison; else back to the browser"),
    Binding("q", "leave", "Back", show=False, id="compare.leave", tooltip="Back to the browser"),
    Binding("w", "worst", "Worst", id="compare.worst",
            tooltip="Jump to the worst token (largest relative error)"),
    Binding("s", "swap", "Swap", id="compare.swap",
            tooltip="Swap training and inference sides and compare again"),
    Binding("v", "toggle_bottom", "Values/metrics", id="compare.toggle",
            tooltip="Short screens: token values or metrics below the tokens"),
    Binding("r", "rerun", "Again", show=False, id="compare.rerun", tooltip="Run the comparison again"),
    Binding("n,p", "browser_only", show=False, id="compare.no_step",
            tooltip="(n/p step through files in the browser, not here)"),
]

TOKENS = [
    Binding("j,down", "move(1)", "Token", key_display="j/k", id="compare.down", tooltip="Next aligned token"),
    Binding("k,up", "move(-1)", "Up", show=False, id="compare.up", tooltip="Previous aligned token"),
    Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="compare.page_down",
            tooltip="One screen of tokens down"),
    Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="compare.page_up",
            tooltip="One screen of tokens up"),
    Binding("g,home", "first", "First", show=False, id="compare.first", tooltip="First aligned token"),
    Binding("G,end", "last", "Last", show=False, id="compare.last", tooltip="Last aligned token"),
    Binding("right", "columns(1)", "Columns", show=False, id="compare.right",
            tooltip="Scroll the slot columns right (narrow screens)"),
    Binding("left", "columns(-1)", "Columns", show=False, id="compare.left",
            tooltip="Scroll the slot columns left"),
]

#: the token table under the sample panel (tab focuses it); n/N/esc only while a search is active
TOKEN_TABLE = [
    Binding("j,down", "move(1)", "Token", key_display="j/k", id="tokens.down", tooltip="Token table: next token"),
    Binding("k,up", "move(-1)", "Up", show=False, id="tokens.up", tooltip="Token table: previous token"),
    Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="tokens.page_down",
            tooltip="Token table: one screen of tokens down"),
    Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="tokens.page_up",
            tooltip="Token table: one screen of tokens up"),
    Binding("g,home", "first", "First", show=False, id="tokens.first", tooltip="Token table: first token"),
    Binding("G,end", "last", "Last", show=False, id="tokens.last", tooltip="Token table: last token"),
    Binding("right", "columns(1)", "Columns", show=False, id="tokens.right",
            tooltip="Token table: scroll the columns right (narrow screens)"),
    Binding("left", "columns(-1)", "Columns", show=False, id="tokens.left",
            tooltip="Token table: scroll the columns left"),
    Binding("slash", "search", "Search", id="tokens.search",
            tooltip="Token table: search the text, jump to the token holding it"),
    Binding("n", "match(1)", "Next match", id="tokens.next_match",
            tooltip="Token table, after /: next match"),
    Binding("N", "match(-1)", "Prev match", show=False, id="tokens.prev_match",
            tooltip="Token table, after /: previous match"),
    Binding("escape", "end_search", "End search", show=False, id="tokens.end_search",
            tooltip="Token table: end the search (then n, N as elsewhere)"),
]

BOOKMARK_LIST = [
    Binding("escape,q,B", "close", "Back", key_display="esc", id="bookmarks.close",
            tooltip="Back to the browser (esc first clears the filter)"),
    Binding("slash", "filter", "Filter", id="bookmarks.filter",
            tooltip="Filter by target, note, #tag or headline"),
    Binding("N,e", "edit_note", "Note", key_display="N", id="bookmarks.note",
            tooltip="Edit the note of the bookmark under the cursor"),
    Binding("t", "edit_tags", "Tags", id="bookmarks.tags",
            tooltip="Edit the tags of the bookmark under the cursor"),
    Binding("d,delete", "delete", "Delete", key_display="d", id="bookmarks.delete",
            tooltip="Delete the bookmark under the cursor (asks first)"),
]

DATASET = [
    Binding("escape", "back", "Cancel/back", key_display="esc", id="dataset.back",
            tooltip="Cancel the scan (or the layers' identify calls), else clear the filter, else back"),
    Binding("q", "leave", "Back", show=False, id="dataset.leave", tooltip="Back to the browser"),
    Binding("tab", "switch_focus", "Findings/files", key_display="tab", id="dataset.focus",
            tooltip="Move between the table of files, the findings and the serve-check's rows"),
    Binding("r", "rescan", "Rescan", show=False, id="dataset.rescan",
            tooltip="Scan the folder again (unchanged files: cache)"),
    Binding("n,p", "browser_only", show=False, id="dataset.no_step",
            tooltip="(n/p step through files in the browser, not here)"),
]

DATASET_TABLE = [
    Binding("j,down", "move(1)", "Down", show=False, id="dataset.down", tooltip="Next file"),
    Binding("k,up", "move(-1)", "Up", show=False, id="dataset.up", tooltip="Previous file"),
    Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="dataset.page_down",
            tooltip="One screen of files down"),
    Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="dataset.page_up",
            tooltip="One screen of files up"),
    Binding("g,home", "first", "First", show=False, id="dataset.first", tooltip="First file"),
    Binding("G,end", "last", "Last", show=False, id="dataset.last", tooltip="Last file"),
    Binding("s", "sort_next", "Sort", id="dataset.sort", tooltip="Sort the files by the next column"),
    Binding("S", "sort_flip", "Reverse", show=False, id="dataset.sort_flip",
            tooltip="Reverse the sort direction"),
    Binding("enter", "choose('open')", "Open", id="dataset.open",
            tooltip="Open the file in the sample view"),
    Binding("b", "choose('bookmark')", "Bookmark", id="dataset.bookmark",
            tooltip="Bookmark or unbookmark the file under the cursor"),
    Binding("t", "choose('pin')", "Pin A", id="dataset.pin",
            tooltip="Compare: pin the file as the training side (A)"),
]

#: the dataset view's serve-check rows (ui/dataset/serving_table.py)
SERVING = [
    Binding("v", "live", "vLLM live", id="dataset.serving_live",
            tooltip="Run the vLLM installed here (--engine-python) on a training prompt with the drafter: "
                    "the layers it feeds the drafter, beside the data's"),
]

#: e and y (ui/shared/exporting.py): what the view shows, as Markdown and JSON in DATA_DIR/exports
MAIN_EXPORT = [
    Binding("e", "export", "Export", show=False, id="main.export",
            tooltip="Export the sample shown (Markdown + JSON)"),
    Binding("y", "copy_report", "Copy", show=False, id="main.copy_report",
            tooltip="Copy its report to the clipboard"),
]
COMPARE_EXPORT = [
    Binding("e", "export", "Export", id="compare.export",
            tooltip="Export the comparison (Markdown + JSON)"),
    Binding("y", "copy_report", "Copy", show=False, id="compare.copy_report",
            tooltip="Copy its report to the clipboard"),
]
DATASET_EXPORT = [
    Binding("e", "export", "Export", id="dataset.export",
            tooltip="Export the findings (Markdown + JSON)"),
    Binding("y", "copy_report", "Copy", show=False, id="dataset.copy_report",
            tooltip="Copy their report to the clipboard"),
]
MAIN += MAIN_EXPORT
COMPARE += COMPARE_EXPORT
DATASET += DATASET_EXPORT

#: the text viewer (enter on a text file: README.txt, config.json)
TEXT_VIEW = [
    Binding("escape,q,h,left", "back", "Back", key_display="esc", id="text.back", tooltip="Text viewer: back"),
    Binding("j,down", "scroll(1)", "Scroll", key_display="j/k", id="text.down", tooltip="Text viewer: one line down"),
    Binding("k,up", "scroll(-1)", "Up", show=False, id="text.up", tooltip="Text viewer: one line up"),
    Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False, id="text.page_down",
            tooltip="Text viewer: one screen down"),
    Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False, id="text.page_up",
            tooltip="Text viewer: one screen up"),
    Binding("g,home", "top", "Top", show=False, id="text.top", tooltip="Text viewer: the top"),
    Binding("G,end", "bottom", "Bottom", show=False, id="text.bottom", tooltip="Text viewer: the end"),
]

#: keys of widgets that are not bindings (an Input, a DataTable): listed in the help only
FILTER_KEYS = [
    ("any text", "Keep only names containing it (case-insensitive)"),
    ("enter", "Back to the list, keep the filter"),
    ("esc", "Clear the filter"),
]

LIST_KEYS = [
    ("enter", "Jump to the sample (connecting to its host when needed)"),
    ("/", "Filter by target, note, #tag or headline (every word must match)"),
    ("N or e", "Edit the note"),
    ("t", "Edit the tags (space-separated words)"),
    ("d or delete", "Delete the bookmark (asks first)"),
    ("esc, q or B", "Back to the browser"),
]

FINDING_KEYS = [
    ("enter", "On a finding: only its files; again: every file"),
]

#: the dataset view's findings (tab focuses them): past the last finding, j scrolls on to the layers
DATASET_FINDINGS = [
    Binding("j,down", "cursor_down", "Down", show=False, id="findings.down",
            tooltip="Findings: next finding, past the last one the layers below"),
    Binding("k,up", "cursor_up", "Up", show=False, id="findings.up", tooltip="Findings: previous finding"),
]

#: the help screen's list scrolls
HELP = [
    Binding("j,down", "scroll_by(1)", "Down", show=False, id="help.down", tooltip="Help: scroll down"),
    Binding("k,up", "scroll_by(-1)", "Up", show=False, id="help.up", tooltip="Help: scroll up"),
    Binding("pagedown,ctrl+d,space", "page_by(1)", "Page down", show=False, id="help.page_down",
            tooltip="Help: one screen down"),
    Binding("pageup,ctrl+u", "page_by(-1)", "Page up", show=False, id="help.page_up", tooltip="Help: one screen up"),
]

#: Textual's own app keys the help lists too
BUILTIN_KEYS = [("ctrl+p", "Command palette"), ("ctrl+q", "Quit")]


def rows(bindings: list[Binding]) -> list[tuple[str, str]]:
    return [(key_text(b.key), b.tooltip or b.description) for b in bindings if b.description]


def sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """(section title, [(keys, what they do)]) for every key the app answers."""
    return [
        ("Anywhere", rows(APP) + BUILTIN_KEYS),
        ("Folder browser", rows(BROWSER)),
        ("Sample panel", rows(MAIN)),
        ("Token table (tab)", rows(TOKEN_TABLE)),
        ("Compare view (c)", rows(COMPARE) + rows(TOKENS)),
        ("While filtering", FILTER_KEYS),
        ("Bookmark list (B)", LIST_KEYS),
        ("Dataset view (D)", rows(DATASET) + rows(DATASET_TABLE) + FINDING_KEYS + rows(DATASET_FINDINGS)
         + rows(SERVING)),
        ("Text viewer (l)", rows(TEXT_VIEW)),
        ("This help", rows(HELP)),
    ]


#: ids of the bindings above: the palette offers exactly these
OWN_IDS = frozenset(b.id for table in (APP, MAIN, BROWSER, COMPARE, TOKENS, TOKEN_TABLE, BOOKMARK_LIST, DATASET,
                                             DATASET_TABLE, DATASET_FINDINGS, SERVING, TEXT_VIEW) for b in table)
