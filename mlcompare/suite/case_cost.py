"""What an answer costs: a case's measured times priced at its machine's hourly rate.

The experiment's `cost_per_hour` (or `--cost-per-hour`) prices an hour of the machine each
device's cases run on: `cpu` for CPU implementations, `gpu` for GPU ones, the whole GPU
box (its CPUs and memory as well as its GPUs), as cloud price lists sell it. A cost is
that price times a measured time, nothing else: the machine is taken as busy with the
case for exactly that long, and idle time, start-up and data preparation are not priced.
"""

from __future__ import annotations

from mlcompare.records import CaseRecord

SECONDS_PER_HOUR = 3600.0


def case_costs(device: str, record: CaseRecord, prices: dict[str, float]) -> dict[str, float]:
    """The cost metrics of one case that ran, from its own times; {} without a price for its device.

    - `fit_cost_usd`: the median warm fit (`fit_time_s`) at the device's price;
    - `end_to_end_cost_usd`: transfer + fit + predict (`end_to_end_time_s`) at that price;
    - `predict_cost_usd_per_1k_rows`: the median warm predict of the test split
      (`predict_time_s`) per 1,000 of its rows.
    """
    price = prices.get(device)
    metrics = record.get("metrics") or {}
    if price is None or "fit_time_s" not in metrics or _remote(record):
        return {}
    per_second = price / SECONDS_PER_HOUR
    out = {"fit_cost_usd": per_second * metrics["fit_time_s"]}
    if "end_to_end_time_s" in metrics:
        out["end_to_end_cost_usd"] = per_second * metrics["end_to_end_time_s"]
    rows = record.get("test_rows")
    if "predict_time_s" in metrics and rows:
        out["predict_cost_usd_per_1k_rows"] = per_second * metrics["predict_time_s"] / rows * 1000
    return out


def cost_ratio(record: CaseRecord, baseline: CaseRecord) -> dict[str, float]:
    """`fit_cost_ratio`: this case's fit cost over its baseline's (below 1: cheaper), when both are priced."""
    mine, theirs = record["metrics"].get("fit_cost_usd"), baseline["metrics"].get("fit_cost_usd")
    if mine is None or not theirs:
        return {}
    return {"fit_cost_ratio": mine / theirs}


def cost_note(device: str, record: CaseRecord, prices: dict[str, float]) -> str:
    """Why a case that ran has no cost, when a price list was given ("" when it has one, or none was asked)."""
    if not prices or record.get("metrics", {}).get("fit_cost_usd") is not None:
        return ""
    if _remote(record):
        return "not priced: the fit ran on the workers of a remote Dask cluster, whose machines have no price here"
    if device not in prices:
        return f"not priced: cost_per_hour has no {device} price"
    return ""


def _remote(record: CaseRecord) -> bool:
    """A distributed case trained on another cluster's machines (not this one's)."""
    kind = (record.get("cluster") or {}).get("kind", "")
    return "://" in kind
