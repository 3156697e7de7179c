"""The LaTeX printer and the escaping filters: tables of input -> exact output."""

from __future__ import annotations

import pytest
import sympy as sp

from derive.documents.latex import (
    QuantityLatexPrinter,
    latex_escape,
    latex_escape_breakable,
    macro_name,
    markdown_escape,
    markdown_math,
)

B, F, W, N_tot, N_act, q, ci, Bs, x = sp.symbols(
    "batch flops hbm_bandwidth params_total params_active bytes_per_param critical_intensity critical_batch x_y")
FORMS = {B: "B", F: "F", W: "W", N_tot: r"N_{\mathrm{tot}}", N_act: r"N_{\mathrm{act}}", q: "q", ci: "F/W",
         Bs: "B^{*}"}
PRINT = QuantityLatexPrinter(FORMS).doprint


@pytest.mark.parametrize("expr, latex", [
    (B, "B"),
    (N_tot, r"N_{\mathrm{tot}}"),
    (2 * N_act * B / F, r"\frac{2 B N_{\mathrm{act}}}{F}"),
    (N_tot * q / W, r"\frac{q N_{\mathrm{tot}}}{W}"),
    (F * q / (2 * W), r"\frac{q F}{2 W}"),
    (B / 2, r"\frac{B}{2}"),
    (sp.Rational(1, 2) * B + F, r"F + \frac{B}{2}"),  # sympy's stored order, not re-sorted
    (B - F, "B - F"),
    (sp.Max(B * N_act / F, N_tot * q / W),
     r"\max\left(\frac{B N_{\mathrm{act}}}{F}, \frac{q N_{\mathrm{tot}}}{W}\right)"),
    (sp.Min(B, F), r"\min\left(B, F\right)"),
    (sp.sqrt(B), r"\sqrt{B}"),
    (B**2, "B^{2}"),
    (2400 * B, "2400 B"),
    # a compound LaTeX form is bracketed under a power and in a product
    (ci**2, r"\left(F/W\right)^{2}"),
    (3 * ci, r"3 \left(F/W\right)"),
    (B / ci, r"\frac{B}{F/W}"),
    (ci, "F/W"),
    # a form with its own superscript keeps it
    (Bs**2, r"\left(B^{*}\right)^{2}"),
    # an undeclared symbol is printed verbatim, never with guessed subscripts
    (x, r"\mathit{x\_y}"),
])
def test_printer(expr, latex):
    assert PRINT(expr) == latex


def test_printer_never_guesses_subscripts():
    hbm = sp.Symbol("hbm_bandwidth")
    assert QuantityLatexPrinter({hbm: "W"}).doprint(hbm) == "W"
    assert sp.latex(hbm) != "W"  # sympy alone would guess


@pytest.mark.parametrize("text, out", [
    ("plain words", "plain words"),
    ("50% & $2/h", r"50\% \& \ensuremath{\$}2/h"),
    ("a_b #1 {x}", r"a\_b \#1 \{x\}"),
    ("~300 and x^2", r"\ensuremath{\sim}300 and x\^{}2"),
    ("300 × 8 ≈ 2,400", r"300 \ensuremath{\times} 8 \ensuremath{\approx} 2,400"),
    ("τ → ∞", r"\ensuremath{\tau} \ensuremath{\to} \ensuremath{\infty}"),
    ('say "hi" now', "say ``hi'' now"),
    ("back\\slash", r"back\textbackslash{}slash"),
    ("a < b > c | d", r"a \textless{} b \textgreater{} c \textbar{} d"),
    ("café", "café"),
    ("emoji 🙂", "emoji ?"),
])
def test_latex_escape(text, out):
    assert latex_escape(text) == out


def test_latex_escape_breakable_allows_breaks_in_paths():
    assert latex_escape_breakable("a/b_c") == r"a/\allowbreak{}b\_\allowbreak{}c"


@pytest.mark.parametrize("text, out", [
    ("plain", "plain"),
    ("a_b *c* $2", r"a\_b \*c\* <span>$</span>2"),  # the dollar escape GitHub documents
    ("x | y", r"x \| y"),
    ("[link](url) <b>", r"\[link\](url) \<b\>"),
    ("two\n  lines", "two lines"),
])
def test_markdown_escape(text, out):
    assert markdown_escape(text) == out


def test_markdown_math_protects_table_pipes():
    assert markdown_math(r"\left|x\right|") == r"\left\vert x\right\vert "


@pytest.mark.parametrize("prefix, text, out", [
    ("claim", "batch_optimum", "claimBatchOptimum"),
    ("val", "critical_batch", "valCriticalBatch"),
    ("val", "l2_cache", "valLTwoCache"),
    ("claim", "batching.batch_optimum", "claimBatchingBatchOptimum"),
    ("defn", "tpu_v5e_flops", "defnTpuVFiveEFlops"),
])
def test_macro_names_are_letters_only(prefix, text, out):
    assert macro_name(prefix, text) == out
    assert out.isalpha()
