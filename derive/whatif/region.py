"""Regions: where a claim holds on a grid of two quantities (sampled, not exact), and its two-colour figure.

``region`` evaluates the claim's one-formula reading (``derive.model.situation.Statement.formula``, compiled to
numpy by ``derive.whatif.sweep``) on the full grid of two axes; ``region_figure`` draws it with the scenario's
point marked.  One quantity at a time has exact intervals instead (``derive.whatif.margin``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from derive.errors import MarginError
from derive.model.declarations import Claim
from derive.model.library import Library
from derive.model.scenario import Scenario, with_input_table_defaults
from derive.whatif.feasibility import feasibility
from derive.whatif.rules import grid_rules


@dataclass
class Region:
    """Where a claim holds on a grid of two quantities (sampled, not exact)."""

    id: str
    axes: list  # two derive.whatif.sweep.Axis
    holds: object  # numpy bool array, shape (len(axes[0]), len(axes[1]))
    values: list  # the scenario values of the two quantities (SI) or None
    out: str | None = None
    # where an input rule the library declares breaks (a layout degree --set would refuse), same shape as ``holds``;
    # None when no rule names either quantity
    refused: object = None
    notes: list[str] = field(default_factory=list)  # the table defaults used, and each broken rule with its count
    infeasible: list = field(default_factory=list)  # feasibility.Violation of the scenario (its values are printed)
    # per feasibility constraint of the library the grid decides, where it fails (same shape as ``holds``): such a
    # point describes no deployment (the memory does not fit, a context past the model's maximum)
    unfit: dict = field(default_factory=dict)

    @property
    def fraction(self) -> float:
        return float(self.holds.mean()) if self.holds.size else 0.0

    @property
    def feasible(self):  # noqa: ANN201 - a numpy bool array
        """Where every feasibility constraint the grid decides holds."""
        import numpy as np

        out = np.ones(self.holds.shape, dtype=bool)
        for failing in self.unfit.values():
            out &= ~failing
        return out

    @property
    def feasible_fraction(self) -> float | None:
        """The share of the feasible points where the claim holds; None when no point is feasible."""
        ok = self.feasible
        return float((self.holds & ok).sum() / ok.sum()) if ok.any() else None

    def ranges_text(self) -> str:
        """The grid's two axes with their ranges: ``context in [3.277k token/seq, 327.7k token/seq] (log)``."""
        from derive.model.display import format_range

        return " x ".join(f"{a.name} in {format_range(float(a.printed[0]), float(a.printed[-1]), a.unit)}"
                          f"{' (log)' if a.log else ''}" for a in self.axes)

    def unfit_lines(self) -> list[str]:
        """One line per feasibility constraint that fails on part of the grid, with its count."""
        size = int(self.holds.size)
        return [f"{int(failing.sum()):,} of the {size:,} points are infeasible: {cid} fails there"
                for cid, failing in self.unfit.items() if failing.any()]

    def to_json(self) -> dict:
        a, b = self.axes
        return {
            "id": self.id, "vary": [a.name, b.name], "unit": [a.unit, b.unit], "sampled": True,
            "grid": [len(a.values), len(b.values)],
            "ranges": [[float(a.printed[0]), float(a.printed[-1])], [float(b.printed[0]), float(b.printed[-1])]],
            "log": [a.log, b.log], "fraction_holding": round(self.fraction, 6),
            "value": [None if v is None else float(v) / ax.scale for v, ax in zip(self.values, self.axes, strict=True)],
            "out": self.out,
            "note": "sampled on a grid (numeric evaluation per point, not a proof); one --vary gives exact intervals",
            "refused_by_input_rules": None if self.refused is None else int(self.refused.sum()),
            "notes": self.notes,
            "infeasible": [v.to_json() for v in self.infeasible],
            "infeasible_points": {cid: int(failing.sum()) for cid, failing in self.unfit.items() if failing.any()},
            "fraction_holding_feasible": None if (f := self.feasible_fraction) is None else round(f, 6),
        }


def region(library: Library, scenario: Scenario, claim_id: str, axes: Sequence) -> Region:
    """The claim evaluated on the full grid of two ``derive.whatif.sweep.Axis`` (vectorised, numeric)."""
    import numpy as np

    from derive.whatif.sweep import Target, check_grid_size, compiled_claim, infeasible_by_constraint

    claim = library.resolve(claim_id)
    if not isinstance(claim, Claim):
        article = "an" if claim.kind[:1] in "aeiou" else "a"  # an assumption, a definition
        raise MarginError(f"'{claim.id}' is {article} {claim.kind}, not a claim", hint="margins are for claims")
    if len(axes) != 2 or axes[0].name == axes[1].name:
        raise MarginError("a region needs two different quantities")
    names = [a.name for a in axes]
    symbols = [library.quantities[n].sym for n in names]
    check_grid_size([len(a.values) for a in axes], 3)  # before the grid is allocated
    # a varied layout degree takes the layout's other degrees from their defaults, as --set would
    scenario, notes = with_input_table_defaults(library, scenario, names)
    mesh = np.meshgrid(axes[0].values, axes[1].values, indexing="ij")
    # a value an input rule's remedy gives that follows an axis (the chip's FP8 rate along the weights' bytes) is
    # carried per point, as --set of the point's values gives it (as in a sweep)
    rules = grid_rules(library, scenario, names, [a.values for a in axes])
    carried = rules.carried if rules is not None else {}
    fn = compiled_claim(library, scenario, Target(claim.id, "claim", claim.id, claim=claim), [*names, *carried],
                        [*symbols, *(library.quantities[n].sym for n in carried)])
    holds = np.broadcast_to(np.asarray(fn(*mesh, *(c.reshape(mesh[0].shape) for c in carried.values())),
                                       dtype=bool), mesh[0].shape)
    values = [scenario.value(n) if n in scenario.values else None for n in names]
    refused = None
    if rules is not None:
        refused = rules.broken.reshape(holds.shape)
        notes += rules.notes(int(holds.size), marked="hatched in the figure")
    unfit = infeasible_by_constraint(library, scenario, [*names, *carried],
                                     [*symbols, *(library.quantities[n].sym for n in carried)],
                                     [*mesh, *(c.reshape(mesh[0].shape) for c in carried.values())])
    return Region(claim.id, list(axes), holds, values, refused=refused, notes=notes,
                  infeasible=feasibility(library, scenario).violations, unfit=unfit)


def region_figure(reg: Region, path: str) -> None:
    """The region as a two-colour map with the scenario's point marked; deterministic bytes."""
    import numpy as np
    from matplotlib.colors import ListedColormap

    from derive.whatif.sweep import pyplot, save_figure

    plt = pyplot()
    a, b = reg.axes
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    ax.pcolormesh(b.printed, a.printed, reg.holds.astype(float), shading="nearest",
                  cmap=ListedColormap(["#f4c7c3", "#b7e1cd"]), vmin=0, vmax=1)
    if reg.holds.any() and not reg.holds.all():
        ax.contour(b.printed, a.printed, reg.holds.astype(float), levels=[0.5], colors="#333333", linewidths=0.8)
    unfit = ~reg.feasible
    if unfit.any():  # where the point describes no deployment (a feasibility bound fails): greyed
        ax.contourf(b.printed, a.printed, unfit.astype(float), levels=[0.5, 1.5], colors=["#9e9e9e"], alpha=0.45)
    if reg.refused is not None and reg.refused.any():  # where an input rule refuses the point: hatched
        ax.contourf(b.printed, a.printed, reg.refused.astype(float), levels=[0.5, 1.5], colors="none", hatches=["xx"])
    va, vb = reg.values
    if va is not None and vb is not None:
        ax.plot([float(vb) / b.scale], [float(va) / a.scale], marker="o", color="black", ms=5)
        ax.annotate("scenario", (float(vb) / b.scale, float(va) / a.scale), textcoords="offset points",
                    xytext=(6, 6), fontsize=8)
    if a.log:
        ax.set_yscale("log")
    if b.log:
        ax.set_xscale("log")
    ax.set_xlabel(f"{b.name} [{b.unit}]")
    ax.set_ylabel(f"{a.name} [{a.unit}]")
    grey = ", infeasible (grey)" if unfit.any() else ""
    ax.set_title(f"{reg.id}: holds (green) / fails (red){grey}, {np.mean(reg.holds):.0%} of the grid", fontsize=9)
    save_figure(fig, path)
    plt.close(fig)
    reg.out = str(path)
