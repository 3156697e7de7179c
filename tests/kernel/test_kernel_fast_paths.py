"""The kernel's speed-ups keep its answers: fresh z3 solvers per query, Max/Min left unevaluated by
substitution and read as opaque symbols by the identity route, one z3 term per shared subterm."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.kernel import logic
from derive.kernel.allocator import keep_freed_memory
from derive.kernel.logic import replace
from derive.kernel.problem import Problem
from derive.kernel.prover import decide
from derive.kernel.translate import Translator, make_variables
from derive.kernel.trusted import Kernel

R = sp.Rational
a, b, c, d, x = sp.symbols("a b c d x")
POS = [logic.gt(a, 0), logic.gt(b, 0), logic.gt(c, 0), logic.gt(d, 0)]


def run(hyps, goal, **kw):
    return decide(Problem(list(hyps), goal, set(kw.get("integer", ())), dict(kw.get("bounds", {})),
                          kw.get("rlimit", 2_000_000), 0))


def test_identity_with_max_whose_arguments_expand_alike_is_proved():
    lhs = sp.Max(a * (b + c), d, evaluate=False)
    rhs = sp.Max(d, a * b + a * c, evaluate=False)
    out = run(POS, logic.eq(lhs + 1, rhs + 1))
    assert out.verdict == "proved"


def test_max_and_min_are_different_symbols_on_the_identity_route():
    goal = logic.eq(sp.Max(a, b, evaluate=False), sp.Min(a, b, evaluate=False))
    k = Kernel(Problem(list(POS), goal, set(), {}))
    assert not k.identity_holds()
    out = run(POS, goal)
    assert out.verdict == "refuted" and out.counterexample["a"] != out.counterexample["b"]


def test_false_twin_of_a_max_identity_is_refuted():
    goal = logic.eq(sp.Max(a * (b + c), d, evaluate=False), sp.Max(d, a * b, evaluate=False))
    out = run(POS, goal)
    assert out.verdict == "refuted"


def test_replace_keeps_symbolic_max_unevaluated_and_folds_numbers():
    e = sp.Max(a, 2 * a, evaluate=False) + sp.Min(b, 3, evaluate=False)
    kept = replace(e, {b: c})
    assert kept.has(sp.Max) and kept.has(sp.Min)
    folded = replace(e, {a: R(1), b: R(5)})
    assert folded == 5
    assert replace(e, {}) is e


def test_unevaluated_max_is_decided_by_every_engine_like_the_evaluated_one():
    e = sp.Max(x, 2 * x, evaluate=False)  # = 2x for x >= 0
    assert run([logic.ge(x, 0)], logic.eq(e, 2 * x)).verdict == "proved"
    box = {x: (R(0), R(3))}
    assert run([logic.ge(x, 0)], logic.le(sp.exp(e), sp.exp(2 * x) + 1), bounds=box).verdict == "proved"
    assert run([logic.ge(x, 0)], logic.le(sp.exp(e), sp.exp(x) + 1), bounds=box).verdict == "refuted"
    assert run([], logic.eq(e, 2 * x), bounds={x: (R(-1), R(1))}).verdict == "refuted"


def test_counterexample_does_not_depend_on_what_was_asked_before():
    goal = logic.le(a * b, c + d)
    first = run(POS, goal)
    run(POS, logic.le(a ** 2 * b, c ** 3 + d))  # other work in between
    run([logic.gt(x, 1)], logic.ge(x ** 3, x))
    again = run(POS, goal)
    assert first.verdict == "refuted" and first.counterexample == again.counterexample


def test_shared_subterms_are_translated_once():
    inner = (a + b) ** 2
    e = inner * c + inner * d + inner
    tr = Translator(make_variables({a, b, c, d}))
    made = []
    keep = tr._keep
    tr._keep = lambda t: made.append(t) or keep(t)  # every term the translator builds passes here
    tr.expr(e)
    n = len(made)
    assert tr.expr(inner).eq(tr.expr(inner)) and len(made) == n  # nothing new for a subterm seen before
    tr.expr(e + 1)
    assert len(made) == n + 2  # the numeral and the new sum


def test_region_without_budget_still_gets_a_witness_for_an_interval_proof():
    # rlimit 50: z3 cannot settle even the region; the interval proof still needs a point of the region
    out = run([logic.gt(x, 0)], logic.le(x**3 - x, 1000), bounds={x: (R(0), R(10))}, rlimit=50)
    assert out.verdict == "proved" and out.engine == "interval"


def test_allocator_setting_is_idempotent():
    assert keep_freed_memory() == keep_freed_memory()


def test_taylor_forms_are_tried_on_a_bounded_number_of_boxes(monkeypatch):
    # the example of a claim with a symbolic exponent: every box of a search that does not close
    # used to get a Taylor try (about 20 ms each, 4000 boxes); the tries now have a budget of their own
    from derive.kernel import interval
    from derive.kernel.trusted import Kernel as K

    calls = []
    real = K.taylor_closes
    monkeypatch.setattr(K, "taylor_closes", lambda self, box, centre: calls.append(1) or real(self, box, centre))
    g = sp.Symbol("g")
    out = run([logic.gt(a, 0), logic.lt(a, 1), logic.ge(g, 1)], logic.le((1 - a ** (g + 1)) / (1 - a), g + 1),
              bounds={a: (R(1, 100), R(99, 100)), g: (R(1), R(16))})
    assert out.verdict in ("proved", "unknown")  # true: never refuted
    assert 0 < len(calls) <= interval.TAYLOR_TRIES


def test_a_simple_point_of_the_region_spares_z3s_question(monkeypatch):
    asked = []
    ask = Kernel._z3_check
    monkeypatch.setattr(Kernel, "_z3_check",
                        lambda self, extra, alone=False, **kw: asked.append(alone) or ask(self, extra, alone=alone,
                                                                                           **kw))
    # a pinned by a hypothesis, b in the middle of its bounds, c at 1: the kernel confirms the point, so
    # z3 is asked about the goal only
    out = run([logic.eq(a, 3), logic.gt(c, 0)], logic.le(a * b, 30 + c), bounds={b: (R(0), R(10))})
    assert out.verdict == "proved" and asked == [False]
    # integer quantities get an integer in their bounds
    asked.clear()
    out = run([logic.ge(a, 0)], logic.le(a, 7), bounds={a: (R(1, 2), R(5, 2))}, integer={a})
    assert out.verdict == "proved" and asked == [False]
    # where the point misses the region, z3 still settles it: empty (inconsistent) or not
    asked.clear()
    assert run([logic.gt(a, 5), logic.lt(a, 4)], logic.ge(a, 0)).verdict == "inconsistent" and True in asked
    asked.clear()
    assert run([logic.gt(a * a, 5)], logic.ge(a * a, 5)).verdict == "proved" and True in asked
    # a relation with a quantity alone on one side moves the point into the region (a = 6): no question
    asked.clear()
    assert run([logic.gt(a, 5)], logic.ge(a, 5)).verdict == "proved" and asked == [False]


@pytest.mark.parametrize(("hyps", "goal"), [
    ([logic.gt(b, 0), logic.eq(2400 / b, 6)], logic.eq(b, 400)),  # a reciprocal: b = 400
    ([logic.eq(c * d + R(1, 50), R(3, 100))], logic.eq(c * d, R(1, 100))),  # a sum, then a product
    ([logic.gt(a, 0), logic.ge(a * b / (2 * c), 300), logic.gt(c, 0)], logic.ge(a * b, 600 * c)),
    ([logic.gt(b, 0), logic.gt(a / b, 7)], logic.gt(a, 7 * b)),  # strict: a value past the bound
])
def test_a_quantity_inside_one_side_is_solved_for_and_spares_z3s_question(monkeypatch, hyps, goal):
    asked = []
    ask = Kernel._z3_check
    monkeypatch.setattr(Kernel, "_z3_check",
                        lambda self, extra, alone=False, **kw: asked.append(alone) or ask(self, extra, alone=alone,
                                                                                           **kw))
    assert run(hyps, goal).verdict == "proved" and True not in asked


def test_a_solved_value_outside_the_region_leaves_the_question_to_z3(monkeypatch):
    asked = []
    ask = Kernel._z3_check
    monkeypatch.setattr(Kernel, "_z3_check",
                        lambda self, extra, alone=False, **kw: asked.append(alone) or ask(self, extra, alone=alone,
                                                                                           **kw))
    # 2400/b == -6 wants b = -400, which b > 0 excludes: no point is guessed, and z3 finds the region empty
    assert run([logic.gt(b, 0), logic.eq(2400 / b, -6)], logic.ge(b, 0)).verdict == "inconsistent"
    assert True in asked


def _record_tactics(monkeypatch, gives_up=lambda name: False, reason="max. resource limit exceeded") -> list[str]:
    """z3's tactics as asked for (by name), each still z3's own, except those ``gives_up`` names, which
    answer unknown with ``reason`` (by default as a tactic out of its rlimit does)."""
    import z3

    real, asked = z3.Tactic, []

    class GivesUp:  # a tactic as a solver that answers unknown
        def solver(self):
            return self

        def set(self, *args):
            pass

        def add(self, *args):
            pass

        def check(self):
            return z3.unknown

        def reason_unknown(self):
            return reason

    def tactic(name, ctx):
        asked.append(name)
        return GivesUp() if gives_up(name) else real(name, ctx)

    from derive.kernel import z3_tactics

    nlsat = z3_tactics._nlsat  # nlsat behind its three steps: one try, asked for as "nlsat"

    def nlsat_try(ctx):
        asked.append("nlsat")
        if gives_up("nlsat"):
            return GivesUp()
        monkeypatch.setattr(z3, "Tactic", real)  # its steps are z3's own tactics
        try:
            return nlsat(ctx)
        finally:
            monkeypatch.setattr(z3, "Tactic", tactic)

    monkeypatch.setattr(z3, "Tactic", tactic)
    monkeypatch.setattr(z3_tactics, "_nlsat", nlsat_try)
    return asked


def test_z3s_solver_is_asked_where_its_tactic_gives_up_as_incomplete(monkeypatch):
    _record_tactics(monkeypatch, gives_up=lambda name: True, reason="(incomplete (theory arithmetic))")
    assert run(POS, logic.ge(a * b + c, c)).verdict == "proved"  # z3.Solver() settled it
    assert run(POS, logic.ge(a * b, c)).verdict == "refuted"


def test_nlsat_answers_unsat_alone_and_its_model_when_the_kernel_confirms_it(monkeypatch):
    asked = _record_tactics(monkeypatch)
    assert run(POS, logic.ge(a * b + c, c)).verdict == "proved"
    assert asked == ["nlsat"]  # the goal's query: nlsat's unsat is z3's answer
    asked.clear()
    out = run(POS, logic.ge(a * b, c))
    assert out.verdict == "refuted" and asked == ["nlsat"]  # its model re-checked: no second solve


def test_the_default_tactics_model_is_asked_for_where_nlsats_is_not_confirmed(monkeypatch):
    from derive.kernel import z3_tactics
    from derive.kernel.trusted import Kernel

    asked = _record_tactics(monkeypatch)
    monkeypatch.setattr(z3_tactics.TacticSolver, "near", lambda self, point: iter(()))
    real_refuted, seen = Kernel.refuted, []

    def refuted(self, point, engine):  # the kernel turns down the first point it is offered (nlsat's)
        seen.append(point)
        return None if len(seen) == 1 else real_refuted(self, point, engine)

    monkeypatch.setattr(Kernel, "refuted", refuted)
    out = run(POS, logic.ge(a * b, c))
    assert out.verdict == "refuted" and asked[:3] == ["nlsat", "nlsat", "default"]


def test_the_default_tactic_decides_where_nlsat_spends_its_share(monkeypatch):
    from derive.kernel import z3_tactics

    monkeypatch.setattr(z3_tactics, "NLSAT_SHARE", 1e-12)  # an rlimit of 1: nlsat gives up at once
    asked = _record_tactics(monkeypatch)
    assert run(POS, logic.ge(a * b + c, c)).verdict == "proved" and "default" in asked
    assert run(POS, logic.ge(a * b, c)).verdict == "refuted"


def test_nlsats_model_stands_where_the_default_tactic_gives_up(monkeypatch):
    _record_tactics(monkeypatch, gives_up=lambda name: name == "default")
    out = run(POS, logic.ge(a * b, c))
    assert out.verdict == "refuted" and out.counterexample["a"] * out.counterexample["b"] < out.counterexample["c"]


def test_a_budget_reason_is_not_handed_on(monkeypatch):
    from derive.kernel import z3_tactics

    assert z3_tactics._out_of_budget("max. resource limit exceeded") and z3_tactics._out_of_budget("canceled")
    assert not z3_tactics._out_of_budget("(incomplete (theory arithmetic))")


def test_formulas_list_their_expressions_as_they_are():
    lhs, rhs = a * b + 1, sp.Max(c, d, evaluate=False)
    f = logic.Implies(logic.And((logic.le(lhs, rhs), logic.Not(logic.eq(a, 2)))),
                      logic.Iff(logic.gt(b, 0), logic.Or((logic.ge(c, d),))))
    got = f.exprs()
    assert got == [lhs, rhs, a, 2, b, 0, c, d] and got[0] is lhs and got[1] is rhs
    kept = f.free_symbols()
    kept.add(x)  # a caller's set: the formula's own stays as it was
    assert f.free_symbols() == {a, b, c, d}


def test_name_of_is_str_without_the_printer():
    from derive.kernel.logic import name_of

    for s in (sp.Symbol("hbm_bandwidth"), sp.Symbol("n", integer=True), sp.Dummy("x"), a * b, sp.Integer(3)):
        assert name_of(s) == str(s)


def test_a_certificates_taylor_leaves_are_not_evaluated_twice(monkeypatch):
    """The kernel keeps its own Taylor answers by box and centre: replaying the proposer's certificate asks
    the same questions, and an answer never asked before is still computed (a forged leaf is checked)."""
    calls = []
    real = Kernel._taylor_holds

    def counted(self, g, ivbox, c):
        calls.append(tuple(sorted((str(s), v) for s, v in c.items())))
        return real(self, g, ivbox, c)

    monkeypatch.setattr(Kernel, "_taylor_holds", counted)
    from derive.kernel.interval import propose

    k = Kernel(Problem([], logic.ge(sp.exp(x), 1 + x), set(), {x: (R(-1), R(2))}))  # touches at 0: Taylor leaves
    kind, tree, witness = propose(k)
    asked = len(calls)
    assert kind == "proved" and asked
    assert k.proved("interval", certificate=tree, witness=witness).verdict == "proved"
    assert len(calls) == asked  # the replay found every answer it needed
    k = Kernel(Problem([], logic.ge(sp.exp(x), 1 + x), set(), {x: (R(-1), R(2))}))
    assert not k.taylor_closes({x: (R(-1), R(2))}, {x: R(1)})  # a leaf no search proposed: computed, and false
    assert k.taylor_closes({x: (R(-1, 8), R(1, 8))}, {x: R(0)})


def test_hypotheses_and_bounds_on_one_quantity_meet_in_one_box():
    box = {x: (R(0), R(10)), a: (R(1), R(9))}
    k = Kernel(Problem([logic.eq(x, 3), logic.le(a, 4)], logic.ge(x * a, 0), set(), box))
    assert k.bounds == {x: (3, 3), a: (1, 4)}
    assert k.fixed_point() is None  # a still ranges
    k = Kernel(Problem([logic.eq(x, 3)], logic.ge(x, 3), set(), {x: (R(0), R(10))}))
    assert k.fixed_point() == {x: 3}
    empty = Kernel(Problem([logic.ge(x, 20)], logic.ge(x, 0), set(), {x: (R(0), R(10))}))
    assert empty.bounds[x] == (0, 10)  # no box holds the (empty) region: the given bounds stay
    assert run([logic.ge(x, 20)], logic.ge(x, 0), bounds={x: (R(0), R(10))}).verdict == "inconsistent"


# the identity route's probe point: a difference with a nonzero exact value there is no identity ----------

def test_a_difference_nonzero_at_the_probe_point_skips_sympys_normal_form(monkeypatch):
    from derive.kernel.trusted import routes

    routes._difference_failure.cache_clear()
    monkeypatch.setattr(routes.sp, "cancel", lambda *a, **k: pytest.fail("cancel ran on a refuted identity"))
    assert routes._difference_failure(a * (b + c) - a * b) == "expand/together/cancel do not reduce lhs - rhs to 0"


@pytest.mark.parametrize("diff", [
    a * (b + c) - a * b - a * c,
    (a + b) ** 2 / (a + b) - a - b,
    sp.Max(a, b, evaluate=False) * (c + 1) - sp.Max(b, a, evaluate=False) * c - sp.Max(a, b, evaluate=False),
    sp.sqrt(a) * sp.sqrt(a) - a,
])
def test_a_true_identity_still_reduces_to_zero_past_the_probe(diff):
    from derive.kernel.trusted import routes

    routes._difference_failure.cache_clear()
    assert routes._difference_failure(diff) is None


def test_the_probe_keeps_to_what_a_quantity_is_declared_to_be():
    from derive.kernel.trusted import routes

    n = sp.Symbol("n", negative=True)
    e = sp.Symbol("e", even=True)
    assert not routes._nonzero_somewhere(n)  # its probe values are positive: not a value n may take
    assert not routes._nonzero_somewhere(e + 1)  # the first probe value is odd: not a value e may take
    assert routes._nonzero_somewhere(a - b) and routes._nonzero_somewhere(sp.Symbol("m", integer=True) + 1)


def test_a_probe_point_where_the_difference_is_undefined_settles_nothing():
    from derive.kernel.trusted import routes

    assert not routes._nonzero_somewhere(1 / (a - 3) - 1 / (a - 3))  # a = 3 there: the normal form decides
    assert not routes._nonzero_somewhere(sp.log(a) - sp.log(a) + sp.exp(b))  # no exact value: not settled


def _rational_functions():
    from hypothesis import strategies as st

    leaves = st.sampled_from([a, b, c, sp.Integer(1), sp.Integer(2), R(1, 3)])
    return st.recursive(leaves, lambda kids: st.one_of(
        st.builds(lambda p, q: p + q, kids, kids), st.builds(lambda p, q: p * q, kids, kids),
        st.builds(lambda p, q: p - q, kids, kids), st.builds(lambda p: 1 / (p + 5), kids)), max_leaves=8)


def test_the_probe_never_skips_a_difference_sympy_reduces_to_zero():
    from hypothesis import given, settings

    from derive.kernel.trusted import routes

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(_rational_functions(), _rational_functions())
    def check(p, q):
        for diff in (p * q - sp.expand(p * q), p - q):
            if routes._nonzero_somewhere(diff):
                assert sp.cancel(sp.together(sp.expand(diff))) != 0

    check()
