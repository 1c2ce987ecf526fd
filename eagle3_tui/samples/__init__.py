"""Loading, normalising, summarising and comparing hidden-state samples.

Everything under this package may import torch and the standard library only (it is shipped
to the remote box and run there by the agent). Import torch lazily where a cheap import matters.
"""
