"""Measure: everything that runs inside one case's process.

The case itself (load, transfer, cold and warm fits, predict, score), timing and its
statistics, peak memory, quality metrics, the device layer (the only code that touches
CuPy, cuDF and cuML, lazily), thread control, the capability checks, the audit of where
a fit really ran, the Dask cluster a distributed case trains on, and the warm worker's
server that forks the CPU cases (`forkserver`).

A case's process must stay small and honest, so this room never imports `suite/`,
`tracking/` or `report/` (a test walks the imports to hold it to that). It may import
`data/`, `pairings/`, `config/` (the allow-list and plugin hooks), `records` and `errors`.
"""
