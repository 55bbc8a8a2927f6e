"""Tracking: the only code that imports MLflow.

`writer` records a suite and its cases (the parent run and one child run per case),
`reader` reads suites back for the report, `client` is the retrying, paginating MLflow
client both use (a new SQLite store it copies from `store_template`'s migrated one), and
`stored` holds the plain types a read suite is made of (no MLflow objects, so the report
can use them without importing MLflow). Nothing outside this room imports mlflow, and
nothing in `measure/` imports this room.
"""

import os

#: MLflow 3 sends usage events (runs created, batches logged) from a thread of the process
#: that logs, every 10 s over HTTPS: in a suite, beside a case's timed calls. Off before
#: MLflow is first imported (it reads the variable then), unless the user set it.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
