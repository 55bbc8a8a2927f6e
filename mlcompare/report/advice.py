"""The advice itself: per pairing, what each implementation costs at the table's own size, how it
scales, where two of them cross, and one recommendation line; every figure read from stored runs.

Measured figures are the case runs' own metrics (the median fit time over its processes and
that median's interval, the speed-up against the baseline and its interval, the quality, the
cost), each with the run id it was read from. Predicted figures come from the power laws of
`mlcompare.report.scaling`, fitted to the stored fit times of the ladder, and always carry
the word "predicted", their interval and the self-check error of every fit they come from.
A reference (a suite recorded elsewhere on the same table) gives figures of its own,
marked with where they were measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mlcompare.data.cache import human_count
from mlcompare.records import Status, StoredRun, StoredSuite
from mlcompare.report import scaling
from mlcompare.report.results import host_label

HERE = "here"


@dataclass(frozen=True)
class Figure:
    """One number of the advice at one size, measured (with the run it was read from) or predicted."""

    value: float
    rows: int
    low: float | None = None
    high: float | None = None
    level: float | None = None
    predicted: bool = False
    run_id: str = ""  # measured: the case run it was read from
    metric: str = ""  # measured: the metric's name on that run
    checks: tuple[float, ...] = ()  # predicted: the self-check error of each fit it comes from
    price_per_hour: float | None = None  # a cost made here: the time (its run's metric, or predicted) at this price

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "", ())}


@dataclass
class Implementation:
    """One implementation of a pairing: its ladder, its fit and its figures at the table's size."""

    pairing: str
    name: str
    device: str
    baseline: bool
    origin: str = HERE  # HERE, or the reference it was measured in
    host: str = ""
    status: str = ""  # measured | skipped | failed
    note: str = ""  # why it is not measured, or why it stopped below the table's size
    points: list[tuple[int, float, str]] = field(default_factory=list)  # (rows, fit time s, run id)
    law: scaling.PowerLaw | None = None
    check: scaling.SelfCheck | None = None
    fit: Figure | None = None  # fit time at the table's size
    predict: Figure | None = None  # predict time at the table's size (measured only)
    quality: Figure | None = None  # the main metric at the largest size it ran
    parity: str = ""  # against the baseline at that size
    speedup: Figure | None = None  # the baseline's fit time over this one's, at the table's size
    cost: Figure | None = None  # US dollars per fit at the table's size
    extrapolated: Figure | None = None

    @property
    def label(self) -> str:
        return self.name if self.origin == HERE else f"{self.name} ({self.origin})"

    @property
    def checks(self) -> tuple[float, ...]:
        return (self.check.error,) if self.check else ()


@dataclass
class Cross:
    """Two implementations' fits crossing: the size, the faster one above it, how sure."""

    first: str
    second: str
    crossing: scaling.Crossing
    predicted: bool  # beyond the sizes both measured
    checks: tuple[float, ...]


@dataclass
class Pairing:
    name: str
    metric: str
    baseline: str
    implementations: list[Implementation] = field(default_factory=list)
    crossings: list[Cross] = field(default_factory=list)
    no_crossing: list[str] = field(default_factory=list)
    recommendation: str = ""
    runs: dict[str, StoredRun] = field(default_factory=dict, repr=False)  # the case runs read, by id

    def of(self, name: str, origin: str = HERE) -> Implementation | None:
        return next((i for i in self.implementations if i.name == name and i.origin == origin), None)


@dataclass
class Table:
    """What the advice was asked about."""

    name: str
    rows: int
    features: int
    task: str
    target: str
    task_note: str = ""  # how the task was found (inferred, and why; or given)


@dataclass
class Advice:
    table: Table
    pairings: list[Pairing]
    extrapolate_rows: int | None = None
    notes: list[str] = field(default_factory=list)
    host: str = ""
    reference: str = ""  # what --reference named, in words
    sizes: list[int] = field(default_factory=list)  # the ladder's sizes that ran


def build(steps: list[StoredSuite], table: Table, stopped: dict[str, str] | None = None,
          extrapolate: float | None = None, prices: dict[str, float] | None = None,
          reference: tuple[str, list[StoredSuite]] | None = None, notes: list[str] | None = None) -> Advice:
    """The advice from the ladder's stored suites. `stopped` maps `pairing · implementation` to
    why it stopped below the table's size (the ladder's words, as the advice run stores them)."""
    cases = [c for s in steps for c in s.cases]
    host = host_label(steps[0].run.tags) if steps else ""
    advice = Advice(table, [], int(round(table.rows * extrapolate)) if extrapolate else None, list(notes or []),
                    host, reference[0] if reference else "",
                    sorted({int(c.params["n_samples"]) for c in cases if c.params.get("n_samples")}))
    for name in dict.fromkeys(c.params.get("pairing", "") for c in cases):
        mine = [c for c in cases if c.params.get("pairing") == name]
        pairing = _pairing(name, mine, table, stopped or {}, prices or {}, advice.extrapolate_rows, HERE, host)
        if reference:
            theirs = [c for s in reference[1] for c in s.cases if c.params.get("pairing") == name
                      and c.params.get("dataset", "").split(" ")[0] == table.name]
            if theirs:
                hosts = {c.params.get("pairing"): host_label(s.run.tags) for s in reference[1] for c in s.cases}
                _add_reference(pairing, theirs, table, prices or {}, advice.extrapolate_rows, reference[0],
                               hosts.get(name, ""))
        _crossings(pairing, table, advice.extrapolate_rows)
        pairing.recommendation = recommend(pairing, advice, steps)
        advice.pairings.append(pairing)
    return advice


def _pairing(name: str, cases: list[StoredRun], table: Table, stopped: dict[str, str], prices: dict[str, float],
             extrapolate_rows: int | None, origin: str, host: str) -> Pairing:
    first = cases[0]
    pairing = Pairing(name, first.tags.get("main_metric", ""), first.tags.get("baseline", ""),
                      runs={c.run_id: c for c in cases})
    for impl_name in dict.fromkeys(c.params.get("implementation", "") for c in cases):
        runs = sorted((c for c in cases if c.params.get("implementation") == impl_name), key=_rows)
        impl = _implementation(pairing, impl_name, runs, table, prices, extrapolate_rows, origin, host)
        impl.note = impl.note or stopped.get(f"{name} · {impl_name}", "")
        pairing.implementations.append(impl)
    _speedups(pairing, table)
    return pairing


def _rows(case: StoredRun) -> int:
    return int(case.params.get("n_samples") or 0)


def _implementation(pairing: Pairing, name: str, runs: list[StoredRun], table: Table, prices: dict[str, float],
                    extrapolate_rows: int | None, origin: str, host: str) -> Implementation:
    first = runs[0]
    impl = Implementation(pairing.name, name, first.params.get("device", ""), name == pairing.baseline, origin, host)
    ok = [r for r in runs if r.tags.get("case_status") == Status.OK and "fit_time_s" in r.metrics]
    if not ok:
        bad = runs[-1]
        impl.status = "skipped" if bad.tags.get("case_status") == Status.SKIPPED else "failed"
        impl.note = bad.tags.get("skip_reason") or bad.tags.get("error") or bad.tags.get("case_status", "")
        return impl
    impl.status = "measured"
    failed = [r for r in runs if r.tags.get("case_status") == Status.FAILED]
    if failed:
        impl.note = f"failed at {human_count(_rows(failed[0]))} rows: {failed[0].tags.get('error', '')}"
    impl.points = [(_rows(r), r.metrics["fit_time_s"], r.run_id) for r in ok]
    sizes, times = [float(n) for n, _, _ in impl.points], [t for _, t, _ in impl.points]
    impl.law, impl.check = scaling.fit(sizes, times), scaling.self_check(sizes, times)
    top = ok[-1]
    at_table = _rows(top) == table.rows
    if at_table:
        impl.fit = _measured(top, "fit_time_s", "fit_time_ci_low_s", "fit_time_ci_high_s", "fit_time_ci_level")
        if "predict_time_s" in top.metrics:
            impl.predict = _measured(top, "predict_time_s", "predict_time_ci_low_s", "predict_time_ci_high_s",
                                     "predict_time_ci_level")
        if "fit_cost_usd" in top.metrics:
            impl.cost = _measured(top, "fit_cost_usd")
    elif impl.law is not None and impl.law.has_interval:
        impl.fit = _predicted(impl.law, table.rows, impl.checks)
    main = top.tags.get("main_metric", pairing.metric)
    if main in top.metrics:
        impl.quality = _measured(top, main)
    impl.parity = top.tags.get("parity", "")
    price = prices.get(impl.device)
    if impl.cost is None and price and impl.fit is not None:
        impl.cost = _priced(impl.fit, price)
    if extrapolate_rows and impl.law is not None and impl.law.has_interval:
        impl.extrapolated = _predicted(impl.law, extrapolate_rows, impl.checks)
    return impl


def _measured(run: StoredRun, metric: str, low: str = "", high: str = "", level: str = "") -> Figure:
    m = run.metrics
    return Figure(m[metric], _rows(run), m.get(low) if low else None, m.get(high) if high else None,
                  m.get(level) if level else None, run_id=run.run_id, metric=metric)


def _predicted(law: scaling.PowerLaw, rows: int, checks: tuple[float, ...]) -> Figure:
    low, high = law.interval(rows) or (None, None)
    return Figure(law.predict(rows), rows, low, high, scaling.LEVEL, predicted=True, checks=checks)


def _priced(figure: Figure, price_per_hour: float) -> Figure:
    """A time at a price per hour: US dollars, with the time's interval, label and source."""
    factor = price_per_hour / 3600
    return Figure(figure.value * factor, figure.rows, figure.low * factor if figure.low is not None else None,
                  figure.high * factor if figure.high is not None else None, figure.level, figure.predicted,
                  figure.run_id, figure.metric, figure.checks, price_per_hour)


def _speedups(pairing: Pairing, table: Table) -> None:
    """Each implementation's speed-up over its origin's baseline at the table's size: the case
    run's own (both measured there, in one suite), else from the two fits (predicted)."""
    for impl in pairing.implementations:
        base = pairing.of(pairing.baseline, impl.origin)
        if impl.baseline or base is None or impl.fit is None or base.fit is None:
            continue
        if not impl.fit.predicted and not base.fit.predicted:  # both measured here: the case run's own
            run = pairing.runs.get(impl.fit.run_id)
            if run is not None and "speedup_fit" in run.metrics:
                impl.speedup = _measured(run, "speedup_fit", "speedup_fit_ci_low", "speedup_fit_ci_high",
                                         "speedup_fit_ci_level")
        if impl.speedup is None and impl.law and base.law and impl.law.has_interval and base.law.has_interval:
            found = scaling.ratio_interval(base.law, impl.law, table.rows)
            value = base.law.predict(table.rows) / impl.law.predict(table.rows)
            impl.speedup = Figure(value, table.rows, found[0] if found else None, found[1] if found else None,
                                  scaling.LEVEL, predicted=True, checks=base.checks + impl.checks)


def _add_reference(pairing: Pairing, cases: list[StoredRun], table: Table, prices: dict[str, float],
                   extrapolate_rows: int | None, origin: str, host: str) -> None:
    """The reference's implementations of this pairing, each marked with where it was measured."""
    other = _pairing(pairing.name, cases, table, {}, prices, extrapolate_rows, origin, host)
    for impl in other.implementations:
        if impl.fit is None and impl.points:  # not at the table's size, no fit: its largest size, as measured
            rows, _, run_id = impl.points[-1]
            run = other.runs[run_id]
            impl.fit = _measured(run, "fit_time_s", "fit_time_ci_low_s", "fit_time_ci_high_s", "fit_time_ci_level")
            if "speedup_fit" in run.metrics:
                impl.speedup = _measured(run, "speedup_fit", "speedup_fit_ci_low", "speedup_fit_ci_high",
                                         "speedup_fit_ci_level")
        pairing.implementations.append(impl)


def _crossings(pairing: Pairing, table: Table, extrapolate_rows: int | None) -> None:
    """Where each pair of implementations measured here crosses, by their fits."""
    fitted = [i for i in pairing.implementations if i.origin == HERE and i.law is not None]
    top = max(table.rows, extrapolate_rows or 0)
    for n, first in enumerate(fitted):
        for second in fitted[n + 1:]:
            assert first.law is not None and second.law is not None
            low = max(min(first.law.sizes), min(second.law.sizes))
            measured_to = min(max(first.law.sizes), max(second.law.sizes))
            found = scaling.crossing(first.law, second.law, (first.name, second.name), (low, top))
            pair = f"{first.name} and {second.name}"
            if found is None:
                faster = first.name if first.law.predict(top) < second.law.predict(top) else second.name
                pair_note = f"{pair} do not cross between {human_count(int(low))} and {human_count(top)} rows " \
                            f"({faster} is faster throughout, by the fits)"
                pairing.no_crossing.append(pair_note)
                continue
            beyond = found.rows > measured_to
            if beyond and not (first.law.has_interval and second.law.has_interval):
                pairing.no_crossing.append(f"{pair}: their lines cross beyond the sizes measured, which too few sizes "
                                           "cannot predict with an interval")
                continue
            pairing.crossings.append(Cross(first.name, second.name, found, beyond, first.checks + second.checks))


# -- in words ---------------------------------------------------------------------------------

def percent(error: float) -> str:
    return f"{error * 100:+.0f} %"


def checks_text(checks: tuple[float, ...]) -> str:
    if not checks:
        return ""
    word = "error" if len(checks) == 1 else "errors"
    return f"self-check {word} {', '.join(percent(c) for c in checks)}"


def seconds(value: float) -> str:
    return f"{value * 1000:.3g} ms" if value < 0.1 else f"{value:.3g} s"


def interval_text(figure: Figure, unit: str = "s") -> str:
    """` [low–high, level]`, or "" when the figure has none."""
    if not figure.has_interval:
        return ""
    assert figure.low is not None and figure.high is not None
    show = seconds if unit == "s" else (lambda v: f"{v:.3g}")
    level = f", {figure.level * 100:.3g} %" if figure.level is not None else ""
    return f" [{show(figure.low)}–{show(figure.high)}{level}]"


def figure_text(figure: Figure, unit: str = "s") -> str:
    """A figure as the advice prints it: a predicted one labelled, with its interval and self-check."""
    if unit == "s":
        value = seconds(figure.value)
    elif unit == "$":
        value = f"${figure.value:.3g}"
    else:
        value = f"{figure.value:.3g}{unit}"
    text = value + (interval_text(figure, "s" if unit == "s" else ""))
    if figure.price_per_hour is not None and not figure.predicted:
        text += f" (its time at ${figure.price_per_hour:g}/h)"
    if figure.predicted:
        wide = "; its interval spans more than a factor 100: too wide to act on" if _too_wide(figure) else ""
        return f"predicted {text} ({checks_text(figure.checks)}{wide})"
    return text


#: A predicted interval wider than this factor says the fit cannot tell, whatever its centre.
TOO_WIDE = 100.0


def _too_wide(figure: Figure) -> bool:
    return figure.low is not None and figure.high is not None and figure.low > 0 and \
        figure.high / figure.low > TOO_WIDE


def crossing_text(pairing: Pairing, cross: Cross) -> str:
    c = cross.crossing
    other = cross.second if c.faster_above == cross.first else cross.first
    bounds = ""
    if c.low is not None or c.high is not None:
        low = human_count(int(c.low)) if c.low is not None else "open"
        high = human_count(int(c.high)) if c.high is not None else "open"
        bounds = f" [{low}–{high}, {scaling.LEVEL * 100:.3g} %]"
    text = f"{cross.first} and {cross.second} cross at {human_count(int(c.rows))} rows{bounds}: above it " \
           f"{c.faster_above} is faster than {other}"
    if cross.predicted:
        return f"predicted: {text} ({checks_text(cross.checks)})"
    return text + " (within the sizes measured)"


@dataclass(frozen=True)
class Rating:
    """An implementation against the baseline: its speed-up at the table's size (or, where one of
    them did not reach it without a fit to predict it, at the largest size both ran at), and their
    qualities and parity at the largest size both ran at (as measured, in one suite)."""

    impl: Implementation
    speedup: Figure
    parity: str
    quality: float | None
    baseline_quality: float | None
    quality_rows: int

    @property
    def clearly_faster(self) -> bool:
        low = self.speedup.low if self.speedup.low is not None else self.speedup.value
        return low > 1


def rate(pairing: Pairing, impl: Implementation, base: Implementation | None) -> Rating | None:
    if base is None:
        return None
    common = sorted({n for n, _, _ in impl.points} & {n for n, _, _ in base.points})
    if not common:
        return None
    run = pairing.runs[next(r for n, _, r in impl.points if n == common[-1])]
    base_run = pairing.runs[next(r for n, _, r in base.points if n == common[-1])]
    figure = impl.speedup
    if figure is None:
        if "speedup_fit" not in run.metrics:
            return None
        figure = _measured(run, "speedup_fit", "speedup_fit_ci_low", "speedup_fit_ci_high", "speedup_fit_ci_level")
    return Rating(impl, figure, run.tags.get("parity", ""), run.metrics.get(pairing.metric),
                  base_run.metrics.get(pairing.metric), common[-1])


def recommend(pairing: Pairing, advice: Advice, steps: list[StoredSuite]) -> str:
    """One line: the implementation to use at the table's size and why, or to keep the baseline."""
    table_rows = advice.table.rows
    base = pairing.of(pairing.baseline)
    metric = pairing.metric
    here = [i for i in pairing.implementations if i.origin == HERE and not i.baseline]
    rated = [r for r in (rate(pairing, i, base) for i in here) if r is not None]
    same = sorted((r for r in rated if r.parity != "degraded"), key=lambda r: -r.speedup.value)
    faster = [r for r in same if r.clearly_faster]
    parts = []
    headline = table_rows  # the size the line's own figure is read at
    if base is None or not base.points:
        parts.append(f"{pairing.name}: the baseline {pairing.baseline} was not measured "
                     f"({base.note if base else 'not run'}), so no speed-up is given")
    elif faster:
        best = faster[0]
        parts.append(f"{pairing.name} at {_at(best.speedup.rows, table_rows, base)}: {best.impl.name}: "
                     f"{_speed(best)} faster than {pairing.baseline} at the same {metric}{_qualities(best)}")
        headline = best.speedup.rows
        parts += [f"{r.impl.name} {_speed(r)}" + _elsewhere(r, headline) for r in same if r is not best]
    else:
        fastest = same[0] if same else None
        headline = fastest.speedup.rows if fastest else table_rows
        why = f" (fastest: {fastest.impl.name} {_speed(fastest)})" if fastest else ""
        where = _at(headline, table_rows, base) if base is not None else human_count(table_rows) + " rows"
        parts.append(f"{pairing.name} at {where}: keep {pairing.baseline}: no other implementation measured here is "
                     f"clearly faster at the same {metric}{why}")
    for r in rated:
        if r.parity == "degraded":
            parts.append(f"{r.impl.name} {_speed(r)}{_elsewhere(r, headline)} but its {metric} falls behind"
                         f"{_qualities(r)}")
    cheapest = _cheapest(pairing)
    if cheapest:
        parts.append(cheapest)
    parts += _not_measured(pairing, steps)
    parts += _from_reference(pairing)
    return "; ".join(parts)


def _at(rows: int, table_rows: int, base: Implementation) -> str:
    if rows == table_rows:
        return f"{human_count(rows)} rows"
    return f"{human_count(rows)} rows (the largest size {base.name} ran at; {base.note or 'the ladder ended'})"


def _elsewhere(rating: Rating, headline_rows: int) -> str:
    """" at N rows" for a figure read at another size than the line's own."""
    if rating.speedup.rows == headline_rows:
        return ""
    return f" at {human_count(rating.speedup.rows)} rows"


def _speed(rating: Rating | Implementation) -> str:
    figure = rating.speedup
    assert figure is not None
    return figure_text(figure, "×")


def _qualities(rating: Rating) -> str:
    if rating.quality is None or rating.baseline_quality is None:
        return ""
    where = "" if rating.quality_rows == rating.speedup.rows else f" at {human_count(rating.quality_rows)} rows"
    return f" ({rating.quality:.4g} against {rating.baseline_quality:.4g}{where})"


def _cheapest(pairing: Pairing) -> str:
    priced = [i for i in pairing.implementations if i.cost is not None and i.origin == HERE]
    if len(priced) < 2:
        return ""
    best = min(priced, key=lambda i: i.cost.value)  # type: ignore[union-attr]
    assert best.cost is not None
    return f"cheapest fit: {best.name} at {figure_text(best.cost, '$')} a fit"


def _not_measured(pairing: Pairing, steps: list[StoredSuite]) -> list[str]:
    """The implementations that could not run here, grouped: the GPU ones said as such."""
    skipped = [i for i in pairing.implementations if i.origin == HERE and i.status == "skipped"]
    gpu = [i for i in skipped if i.device == "gpu"]
    out = []
    no_gpu = any(s.run.tags.get("host.gpu", "").startswith("none") for s in steps)
    if gpu:
        why = "no GPU here" if no_gpu else gpu[0].note
        out.append(f"the GPU implementations were not measured: {why} ({', '.join(i.name for i in gpu)})")
    for i in skipped:
        if i.device != "gpu":
            out.append(f"{i.name} was not measured: {i.note}")
    return out


def _from_reference(pairing: Pairing) -> list[str]:
    theirs = [i for i in pairing.implementations if i.origin != HERE and not i.baseline and i.speedup is not None]
    if not theirs:
        return []
    best = max(theirs, key=lambda i: i.speedup.value)  # type: ignore[union-attr]
    assert best.speedup is not None and best.fit is not None
    relation = "faster than" if best.speedup.value > 1 else "the speed of"
    return [f"from {best.origin} on {best.host}: {best.name} {_speed(best)} {relation} its {pairing.baseline} at "
            f"{human_count(best.speedup.rows)} rows (measured there)"]


# -- as stored metrics --------------------------------------------------------------------------

def metrics(advice: Advice) -> dict[str, float]:
    """The advice's figures as metrics of its run (`advice.<pairing>.<implementation>.<figure>`)."""
    out: dict[str, float] = {}
    if advice.extrapolate_rows:
        out["advise_extrapolated_rows"] = float(advice.extrapolate_rows)
    for p in advice.pairings:
        for i in p.implementations:
            if i.origin != HERE:
                continue
            stem = f"advice.{p.name}.{i.name}"
            if i.law is not None:
                out[f"{stem}.exponent"] = i.law.b
                bounds = i.law.exponent_interval()
                if bounds:
                    out[f"{stem}.exponent_low"], out[f"{stem}.exponent_high"] = bounds
            if i.check is not None:
                out[f"{stem}.self_check_error"] = i.check.error
            for name, figure in (("fit_time_s", i.fit), ("speedup", i.speedup), ("fit_cost_usd", i.cost),
                                 ("extrapolated_fit_time_s", i.extrapolated)):
                if figure is None:
                    continue
                out[f"{stem}.{name}"] = figure.value
                if figure.has_interval:
                    out[f"{stem}.{name}_low"], out[f"{stem}.{name}_high"] = figure.low, figure.high  # type: ignore
                out[f"{stem}.{name}_predicted"] = float(figure.predicted)
        for c in p.crossings:
            stem = f"advice.{p.name}.break_even_rows.{c.first}.{c.second}"
            out[stem] = c.crossing.rows
            if c.crossing.low is not None:
                out[f"{stem}_low"] = c.crossing.low
            if c.crossing.high is not None:
                out[f"{stem}_high"] = c.crossing.high
    return {k: v for k, v in out.items() if v is not None and math.isfinite(v)}


def as_dict(advice: Advice) -> dict[str, Any]:
    """Every figure with where it comes from (`advice.json` on the advice run)."""
    def impl(i: Implementation) -> dict[str, Any]:
        out: dict[str, Any] = {"implementation": i.name, "device": i.device, "baseline": i.baseline,
                               "origin": i.origin, "status": i.status, "note": i.note,
                               "points": [{"rows": n, "fit_time_s": t, "run_id": r} for n, t, r in i.points]}
        if i.law is not None:
            out["fit"] = {"a": i.law.a, "exponent": i.law.b, "sizes": list(i.law.sizes),
                          "exponent_interval": i.law.exponent_interval()}
        if i.check is not None:
            out["self_check"] = {"rows": i.check.rows, "measured_s": i.check.measured_s,
                                 "predicted_s": i.check.predicted_s, "error": i.check.error,
                                 "from_sizes": i.check.from_sizes}
        for name in ("fit", "predict", "quality", "speedup", "cost", "extrapolated"):
            figure = getattr(i, name)
            if figure is not None:
                out[f"{name}_figure" if name == "fit" else name] = figure.as_dict()
        out["parity"] = i.parity
        return out

    return {"table": advice.table.__dict__, "sizes": advice.sizes, "extrapolate_rows": advice.extrapolate_rows,
            "host": advice.host, "reference": advice.reference, "notes": advice.notes,
            "pairings": [{"pairing": p.name, "metric": p.metric, "baseline": p.baseline,
                          "recommendation": p.recommendation,
                          "implementations": [impl(i) for i in p.implementations],
                          "crossings": [{"first": c.first, "second": c.second, "rows": c.crossing.rows,
                                         "low": c.crossing.low, "high": c.crossing.high,
                                         "faster_above": c.crossing.faster_above, "predicted": c.predicted,
                                         "checks": list(c.checks)} for c in p.crossings],
                          "no_crossing": p.no_crossing} for p in advice.pairings]}
