"""Configuration: what a suite will run, read from files and validated before anything runs.

This room holds the pydantic models of experiment files, pairing files and dataset cards
(`fields` has their field types and turns a validation error into an `InputError`; the
models also give `mlcompare schema`), the estimator allow-list and parameter checks, the
selection of pairings with their overrides and sweeps, and the entry-point plugins. A
mistake found here is an `InputError`: one line naming the file and the field, exit code
2, nothing written.

It may import `data/` (dataset specs and cards), `pairings/` (the catalog files and tasks)
and `measure/` (the metric registry and the capability probes); never `suite/`,
`tracking/`, `report/` or `cli/`.
"""
