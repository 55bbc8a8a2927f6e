"""Cost per fit: measured times priced at each device's hourly rate, and the ratio with the baseline."""

from __future__ import annotations

import pytest

from mlcompare.suite.case_cost import case_costs, cost_note, cost_ratio

PRICES = {"cpu": 0.192, "gpu": 3.67}


def _record(fit_s: float, predict_s: float | None = 0.5, e2e_s: float | None = None, rows: int | None = 2000,
            cluster: dict | None = None) -> dict:
    metrics = {"fit_time_s": fit_s, "end_to_end_time_s": e2e_s if e2e_s is not None else fit_s + (predict_s or 0)}
    if predict_s is not None:
        metrics["predict_time_s"] = predict_s
    record = {"metrics": metrics, "test_rows": rows}
    if cluster:
        record["cluster"] = cluster
    return record


def test_a_fit_costs_its_time_at_its_devices_hourly_price():
    out = case_costs("cpu", _record(36.0, predict_s=0.9, e2e_s=40.0, rows=3000), PRICES)
    assert out["fit_cost_usd"] == pytest.approx(0.192 / 100)  # 36 s is a hundredth of an hour
    assert out["end_to_end_cost_usd"] == pytest.approx(0.192 * 40 / 3600)
    # 0.9 s for 3,000 rows: 0.3 s per 1,000 rows
    assert out["predict_cost_usd_per_1k_rows"] == pytest.approx(0.192 * 0.3 / 3600)
    assert case_costs("gpu", _record(36.0), PRICES)["fit_cost_usd"] == pytest.approx(3.67 / 100)


def test_a_gpu_ten_times_faster_at_nineteen_times_the_price_costs_more():
    cpu = {"metrics": case_costs("cpu", _record(10.0), {"cpu": 1.0})}
    gpu = {"metrics": case_costs("gpu", _record(1.0), {"gpu": 19.0})}
    assert cost_ratio(gpu, cpu)["fit_cost_ratio"] == pytest.approx(1.9)
    assert cost_ratio(cpu, cpu)["fit_cost_ratio"] == 1.0


def test_no_price_no_cost_and_the_run_says_why():
    gpu_case = _record(1.0)
    assert case_costs("gpu", gpu_case, {"cpu": 0.192}) == {}
    assert cost_note("gpu", gpu_case, {"cpu": 0.192}) == "not priced: cost_per_hour has no gpu price"
    assert cost_note("gpu", gpu_case, {}) == ""  # nobody asked for costs
    assert cost_ratio({"metrics": {"fit_cost_usd": 1.0}}, {"metrics": {}}) == {}


def test_tasks_without_predict_get_fit_costs_only():
    out = case_costs("cpu", _record(2.0, predict_s=None), PRICES)
    assert set(out) == {"fit_cost_usd", "end_to_end_cost_usd"}


def test_a_remote_dask_cluster_is_not_priced_at_this_machines_rate():
    remote = _record(2.0, cluster={"kind": "tcp://10.0.0.1:8786", "workers": 4})
    assert case_costs("cpu", remote, PRICES) == {}
    assert "remote Dask cluster" in cost_note("cpu", remote, PRICES)
    local = _record(2.0, cluster={"kind": "LocalCluster", "workers": 2})
    assert case_costs("cpu", local, PRICES)["fit_cost_usd"] == pytest.approx(0.192 * 2 / 3600)
