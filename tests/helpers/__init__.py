"""What the test areas share, in one place.

Plain modules (imported by name): `tui` (make an app, wait for it, read its screen), `tree`,
`ssh_servers`, `drafter`, `scan_build`, `tiny_llama`, `hf_target`, `compare_view`,
`dataset_view`, `warm_cli` (CLI runs forked from an interpreter that imported torch once), ...
Fixture modules, loaded for every test as pytest plugins by
tests/conftest.py (so no test area imports another one's conftest): `ssh`, `accept`, `scan`,
`tokens`, `vocab`. Autouse fixtures are opted into per area from `autouse`.
"""
