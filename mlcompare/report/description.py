"""The parent run's description (`mlflow.note.content`): the headline numbers in Markdown."""

from __future__ import annotations

from typing import Any, cast

import pandas as pd

from mlcompare.records import Status
from mlcompare.report import cheapest, equal_quality, latency_crossings, results
from mlcompare.report.render import markdown_table
from mlcompare.report.table import (
    Comparison,
    break_even_data,
    level_text,
    number_text,
    rows_text,
    sections,
    worker_lines,
)

_DESCRIPTION_LIMIT = 5500  # MLflow keeps tags up to 8000 characters; the recorder clips at 6000



def _speedup_at(r) -> str:
    """'**2.1×** [1.8–2.5, 90 %] at 30k rows, accuracy 0.95 (ok)': one size of the headline."""
    ci = (f" [{r.speedup_fit_ci_low:.3g}–{r.speedup_fit_ci_high:.3g}{level_text(r.speedup_fit_ci_level)}]"
          if not pd.isna(r.speedup_fit_ci_low) and not pd.isna(r.speedup_fit_ci_high) else "")
    parity = f" ({r.parity})" if r.parity in ("ok", "degraded") else ""
    rows = f"{rows_text(r.training_rows)} training rows" if not pd.isna(r.training_rows) else "all rows"
    return f"**{r.speedup_fit:.3g}×**{ci} at {rows}, {r.main_metric} {number_text(r.quality)}{parity}"


def audit_lines(cases) -> list[str]:
    """What the fairness audit found, once per pairing × implementation and difference (the
    datasets and sizes where it was found are not repeated)."""
    found: dict[str, list[str]] = {}
    for r in cases[cases["status"] == Status.OK].itertuples():
        for difference in r.found_differences or []:
            key = f"{r.pairing} · {r.impl_label} vs {r.baseline}"
            if difference not in found.setdefault(key, []):
                found[key].append(difference)
    return [f"{key}: {'; '.join(differences)}" for key, differences in found.items()]


def description(comparison: Comparison) -> str:
    """Markdown for the parent run's description (`mlflow.note.content`): the headline numbers."""
    cases = comparison.cases
    suite = comparison.suites[0]
    counts = cases["status"].value_counts().to_dict()
    name = suite.run.params.get("suite_name", suite.run.name)
    lines = [f"**mlcompare suite `{name}`** on {results.host_label(suite.run.tags)}: "
             f"{counts.get('ok', 0)} cases ran, {counts.get('skipped', 0)} skipped, {counts.get('failed', 0)} failed.",
             ""]
    ran = cases[(cases["status"] == Status.OK) & ~cases["is_baseline"] & cases["speedup_fit"].notna()]
    if not ran.empty:
        # every size, never a selected best: a maximum over sizes with an unadjusted interval
        # would claim more than was measured
        lines.append("Fit speed-up against the baseline at each size (interval and its coverage):")
        keys = ["pairing", "impl_label", "dataset", "n_features", "sweep_shared"]
        for key, part in ran.groupby(keys, sort=False):
            pairing, impl, _, _, shared = cast(tuple[str, str, str, int, str], key)
            part = part.sort_values("training_rows")
            first = part.iloc[0]
            where = f"{first['dataset']} ×{first['n_features']}"
            sizes = "; ".join(_speedup_at(r) for r in part.itertuples())
            lines.append(f"- {pairing} · {impl} vs {first['baseline']} on {results.group_label(where, shared)}: "
                         f"{sizes}")
        lines.append("")
    r: Any  # a row: its columns as attributes (pandas-stubs type them all as any scalar)
    for r in cases[cases["speedup_fit_lower_bound"].notna()].itertuples():
        lines.append(f"- {r.pairing} · {r.impl_label} on {results.group_label(r.dataset_label, r.sweep_shared)}: "
                     f"**≥ {r.speedup_fit_lower_bound:.3g}×** vs {r.baseline} (its time limit stopped the baseline "
                     f"in its first fit)")
    for b in comparison.break_evens:
        lines.append(f"- break-even: {b.pairing} · {b.impl_label} beats {b.baseline} from about "
                     f"{rows_text(b.rows)} rows ({break_even_data(b)})")
    lines += [f"- workers: {line}" for line in worker_lines(cases)]
    lines += [f"- {line}" for line in cheapest.cheapest_lines(cases)]
    found = latency_crossings.crossings(cases)
    lines += [f"- {line}" for pairing in dict.fromkeys(c.pairing for c in found)
              for line in latency_crossings.crossing_lines(found, pairing)]
    lines += [f"- threads: {w.text()}" for w in comparison.threads_worth]
    lines += [f"- fairness audit: {line}" for line in audit_lines(cases)]
    lines += [f"- at equal quality: {line}" for line in equal_quality.lines(comparison.curves)]
    lines += [f"- at equal quality, {line}" for line in equal_quality.exact_lines(cases)]
    skipped = cases[cases["status"] == Status.SKIPPED]
    if not skipped.empty:
        reasons = dict.fromkeys(f"{r.implementation}: {r.note}" for r in skipped.itertuples())
        lines.append(f"- skipped here: {'; '.join(reasons)}")
    noisy = cases[cases["timing_stability"].astype(str).str.startswith("noisy")]
    for r in noisy.itertuples():
        lines.append(f"- noisy timing, {r.run_name}: {r.timing_stability.removeprefix('noisy: ')}")
    failed = cases[cases["status"] == Status.FAILED]
    for r in failed.itertuples():
        lines.append(f"- FAILED {r.run_name}: {r.note}")
    lines += ["", "Artifacts: `comparison.html` (table and plots), `comparison.csv`, `comparison.md`, "
              "`comparison_table.json`, `plots/`."]
    text = "\n".join(lines)
    table = "\n".join(f"#### {pairing}\n\n{markdown_table(cells)}\n" for pairing, cells, _, _ in sections(comparison))
    if len(text) + len(table) + 2 <= _DESCRIPTION_LIMIT:
        text += "\n\n" + table
    return text[:_DESCRIPTION_LIMIT]
