"""eagle3-tui: inspect and compare EAGLE-3 hidden-state captures.

Importing this package must stay cheap: no torch, no textual, no asyncssh here.
"""

__version__ = "0.1.0"
