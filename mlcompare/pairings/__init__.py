"""The pairing catalog: one YAML file per model family (data, not code), and the tasks.

The files are read and validated by `mlcompare.config.pairing`; `tasks` says what each
task's estimators are asked to do. This room imports nothing else of mlcompare.
"""

from pathlib import Path

#: The folder of the built-in pairing files.
CATALOG_DIR = Path(__file__).resolve().parent
