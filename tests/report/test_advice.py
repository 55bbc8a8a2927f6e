"""The recommendation line of the advice, built from stored runs made here (no store): every
speed-up it names is read at the line's own size unless it says another one."""

from __future__ import annotations

from mlcompare.records import Status, StoredRun, StoredSuite
from mlcompare.report import advice as advising

TABLE = advising.Table("sales", 16000, 8, "regression", "price")


def case(impl: str, rows: int, fit_s: float, speedup: tuple[float, float, float] | None = None,
         parity: str = "ok", r2: float = 0.9) -> StoredRun:
    metrics = {"fit_time_s": fit_s, "fit_time_ci_low_s": fit_s * 0.9, "fit_time_ci_high_s": fit_s * 1.1,
               "fit_time_ci_level": 0.75, "r2": r2}
    if speedup:
        metrics |= dict(zip(("speedup_fit", "speedup_fit_ci_low", "speedup_fit_ci_high"), speedup))
        metrics["speedup_fit_ci_level"] = 0.9
    return StoredRun(f"{impl}-{rows}", f"gb · {impl} · sales {rows}", "FINISHED", 0,
                     params={"pairing": "gb", "implementation": impl, "n_samples": str(rows), "device": "cpu",
                             "dataset": f"sales {rows}"},
                     metrics=metrics, tags={"case_status": Status.OK, "main_metric": "r2", "baseline": "sklearn",
                                            "parity": parity})


def advice_of(cases: list[StoredRun], stopped: dict[str, str]) -> advising.Advice:
    suite = StoredSuite(StoredRun("s", "suite", "FINISHED", 0, tags={"host.gpu": "none"}), "advise-sales", cases)
    return advising.build([suite], TABLE, stopped)


def test_a_baseline_predicted_at_the_tables_size_gives_predicted_speedups_read_there():
    sizes = [1000, 2000, 4000, 8000, 16000]
    cases = [case("sklearn", n, 1e-4 * n * (1.02 if k % 2 else 0.98)) for k, n in enumerate(sizes[:-1])]
    cases += [case("lightgbm", n, 1e-5 * n * (1.01 if k % 2 else 0.99), (10.0, 9.0, 11.0)) for k, n in enumerate(sizes)]
    cases += [case("sklearnex", n, 2e-5 * n * (1.03 if k % 2 else 0.97), (5.0, 4.5, 5.5), parity="degraded", r2=0.7)
              for k, n in enumerate(sizes)]
    line = advice_of(cases, {"gb · sklearn": "not afforded: 16000 rows"}).pairings[0].recommendation
    assert line.startswith("gb at 16k rows: lightgbm: predicted ")
    assert "faster than sklearn at the same r2 (0.9 against 0.9 at 8k rows)" in line
    assert "; sklearnex predicted " in line and "but its r2 falls behind (0.7 against 0.9 at 8k rows)" in line
    assert " at 16k rows" not in line.split(":", 1)[1]  # every figure is the line's own size


def test_without_a_baseline_fit_the_line_is_read_where_the_baseline_stopped_and_says_other_sizes():
    cases = [case("sklearn", n, 1e-4 * n) for n in (1000, 2000)]  # two sizes: a line without an interval
    cases += [case("lightgbm", n, 1e-4 * n, (1.1, 0.8, 1.4)) for n in (1000, 2000, 4000)]
    cases += [case("sklearnex", 1000, 0.02, (5.0, 4.5, 5.5), parity="degraded", r2=0.7)]
    stopped = {"gb · sklearn": "not afforded: 4000 rows would take about 90 s (predicted), 20 s of the budget were "
                               "left", "gb · sklearnex": "failed at 2000 rows: out of memory"}
    line = advice_of(cases, stopped).pairings[0].recommendation
    assert line.startswith("gb at 2k rows (the largest size sklearn ran at; not afforded: 4000 rows ")
    assert ": keep sklearn: no other implementation measured here is clearly faster at the same r2 (fastest: " \
           "lightgbm 1.1× [0.8–1.4, 90 %]);" in line
    assert "; sklearnex 5× [4.5–5.5, 90 %] at 1k rows but its r2 falls behind (0.7 against 0.9)" in line
