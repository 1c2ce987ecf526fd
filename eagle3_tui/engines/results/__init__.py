"""The shapes of what the engines return (JSON-ready dicts), one module per engine, and the one
way to build an error (errors.py) and a finding (findings.py).

Every engine (summary, compare, identify, accept, scan, the live check) answers with a plain
dict, so that the remote agent can send it as one JSON line and the CLI can print it as it is;
these TypedDicts say what those dicts hold, and the engines, the sources and the views use them
in their signatures. Standard library only (shipped to the remote box with the engines); the
only module of the package they import is engines/finding_codes.py.
"""
