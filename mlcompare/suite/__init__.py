"""Suite: everything in the suite's own process, around the cases.

The order of the cases, a process for each (isolation: forked from the warm worker, or a
fresh Python), spreading them over a Dask
cluster, signals as a clean stop, resume fingerprints, the progress shown on the
terminal, the host fingerprint, the comparison of each case with its baseline, and the
hand-over of each finished record to the tracking side.

It may import `config/`, `data/`, `measure/` (capability checks, statistics), `records`
and `errors`; it reaches MLflow only through a recorder object it is given (`tracking/`)
and the report only when the suite ends.
"""
