"""The wire contract: every name a real suite logs is declared in `mlcompare.records`, and the
writer refuses one that is not."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import main_here, write

from mlcompare import records
from mlcompare.tracking.writer import Recorder


def test_the_names_of_a_rich_suite_are_all_declared(workdir):
    # rounds, repeats, a sweep along a ladder, prices, predict latency, system metrics, a skipped
    # GPU implementation: the run exercises most of what a case and a suite log
    write(workdir / "names.yaml", """\
        name: names
        repeats: 2
        rounds: 2
        equal_quality: true
        system_metrics: true
        cost_per_hour: {cpu: 1.0, gpu: 3.0}
        predict_batch_sizes: [1, 50]
        predict_latency_budget_s: 0.02
        datasets:
          - {generator: blobs, n_samples: 1000, n_features: 6}
          - {generator: classification, n_samples: 800, n_features: 6}
        pairings:
          - kmeans
          - {pairing: gradient_boosting, equal_quality: [4, 8]}
        implementations: [sklearn, xgboost_cpu, xgboost_gpu]
        """)
    code, _, err = main_here("run", "names.yaml", "--quiet")
    assert code == 0, err
    db = sqlite3.connect(workdir / "mlflow.db")
    logged = {"param": set(), "metric": set(), "tag": set()}
    for table, kind in (("params", "param"), ("metrics", "metric"), ("tags", "tag")):
        rows = db.execute(f"select distinct t.key, k.value from {table} t join tags k on k.run_uuid = t.run_uuid "
                          "and k.key = 'mlcompare.kind'").fetchall()
        for key, run_kind in rows:
            logged[kind].add((run_kind, key))
    # the check ran inside the writer (conftest sets MLCOMPARE_CHECK_NAMES); here it is read back too
    for run_kind in ("case", "suite"):
        missing = records.undeclared(run_kind, *(sorted(k for r, k in logged[kind] if r == run_kind)
                                                 for kind in ("param", "metric", "tag")))
        assert missing == [], missing
    assert ("case", "fit_time_s") in logged["metric"] and ("case", "predict_latency_p50_ms_b50") in logged["metric"]
    assert any(k.startswith("speedup_equal_quality.") or k.startswith("quality_at_equal_time.")
               for r, k in logged["metric"] if r == "suite")


def test_a_name_the_contract_does_not_declare_is_refused(workdir):
    assert records.undeclared("case", metrics=["fit_time_s", "fit_tme_s"], tags=["host.os", "hostos"]) == [
        "metric fit_tme_s", "tag hostos"]
    recorder = Recorder("contract")
    recorder.start_suite("suite", params={"suite_name": "x"}, tags={"mlcompare.kind": "suite"})
    with pytest.raises(ValueError, match="metric fit_tme_s"):
        recorder.log_case("case", "FINISHED", {"pairing": "kmeans"}, {"fit_tme_s": 1.0}, {"mlcompare.kind": "case"})
    recorder.abort_suite()


def test_a_quality_metric_is_declared_by_the_registry_that_scores_it():
    from mlcompare.pairings import quality

    assert records.undeclared("case", metrics=["accuracy", "roc_auc", "adjusted_rand"]) == []
    assert set(quality.METRICS) == records.QUALITY_METRICS  # a plugin's metric goes into both
    assert records.undeclared("suite", metrics=["accuracy"]) == ["metric accuracy"]


def test_what_the_reader_and_the_report_read_is_declared():
    """The other side of the contract: every name the store is read back by is one the writer may log."""
    from mlcompare.report import results
    from mlcompare.tracking import reader

    assert records.undeclared("case", params=[*results.TEXT_PARAMS, *results.INT_PARAMS],
                              metrics=[*results.CASE_METRICS, *reader.HISTORIES]) == []
    assert set(reader.HISTORIES) <= set(records.CASE_HISTORIES)
