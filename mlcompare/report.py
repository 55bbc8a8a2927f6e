"""Comparison tables built from result records: one row per case, ready for CSV/HTML."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

_COLUMNS = ["pairing", "dataset", "n_samples", "n_features", "implementation", "library", "device",
            "status", "fit_time_s", "fit_cold_time_s", "predict_time_s", "transfer_time_s",
            "speedup_fit", "main_metric", "quality", "note"]


def comparison_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    rows = []
    for r in records:
        m = r.get("metrics", {})
        rows.append({
            **{k: r.get(k) for k in ("pairing", "dataset", "n_samples", "n_features", "implementation",
                                     "library", "device", "status", "main_metric")},
            **{k: m.get(k) for k in ("fit_time_s", "fit_cold_time_s", "predict_time_s", "transfer_time_s",
                                     "speedup_fit")},
            "quality": m.get(r.get("main_metric")),
            "note": r.get("skip_reason") or r.get("error") or "",
        })
    return pd.DataFrame(rows, columns=_COLUMNS)


def headline(table: pd.DataFrame, name: str) -> str:
    """A few lines for the parent run's description in the MLflow UI."""
    counts = table["status"].value_counts().to_dict()
    lines = [f"**mlcompare suite `{name}`**: {counts.get('ok', 0)} cases ran, "
             f"{counts.get('skipped', 0)} skipped, {counts.get('failed', 0)} failed."]
    ran = table[(table["status"] == "ok") & table["speedup_fit"].notna()]
    others = ran[ran["speedup_fit"].ne(1.0) | ran["device"].eq("gpu")]
    for _, row in others.sort_values("speedup_fit", ascending=False).head(5).iterrows():
        lines.append(f"- {row['pairing']} · {row['implementation']} on {row['dataset']}: "
                     f"fit {row['speedup_fit']:.2f}× the baseline's speed")
    return "\n".join(lines)


def to_html(table: pd.DataFrame, name: str) -> str:
    body = table.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", border=0)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>mlcompare · {html.escape(name)}</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
            "td,th{padding:4px 8px;border-bottom:1px solid #ddd;text-align:right}</style></head>"
            f"<body><h1>mlcompare · {html.escape(name)}</h1>{body}</body></html>")
