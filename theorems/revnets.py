"""Ciphers and neural nets: the Feistel trick and reversible networks

Chapter 7 of the lecture ("Convergent evolution between neural nets and cryptography",
02:04:02-end).  Ciphers and neural networks both mix information across all their inputs, with
opposite aims.  One idea crossed over: the Feistel construction, which makes an invertible map out of
ANY function f by adding f of one half to the other half.  Reversible residual networks (RevNets) use
it so that a layer's inputs can be recomputed from its outputs; training then needs no stored
activations, trading extra compute for memory.

Main claims:
- ``revnets.cipher_net_analogies``: the qualitative parallels (mixing, differential cryptanalysis as
  differentiation over GF(2), adversarial examples as the avalanche property).
- ``revnets.feistel_inverse``: (x, y) ↦ (x, y + f(x)) is undone by (x, z) ↦ (x, z − f(x)), for an
  arbitrary, undefined f (no invertibility of f needed).
- **RevNet invertibility** ``revnets.revnet_invertibility``: the RevNet block y1 = x1 + F(x2),
  y2 = x2 + G(y1) is undone by x2 = y2 − G(y1), x1 = y1 − F(x2), for arbitrary F and G
  (``revnets.revnet_inverse_second_half`` recovers x2, the headline recovers x1).
- ``revnets.revnet_memory_tradeoff``: stored activations are linear in depth for a standard network
  and a constant for a RevNet (depth/2 times less from three layers on), at a third more training
  compute (8·N·D instead of 6·N·D).

Notation: x, y (and x1, x2) the two halves of a layer's activations, f, F, G arbitrary functions
(sympy undefined functions: the identities hold for every f); n_layers the depth, a the activation
bytes one layer keeps for the backward pass.

Implementation notes: identities with undefined functions are decided by sympy and re-checked by
exact evaluation with several concrete functions substituted for f, F and G, including
non-invertible ones.  The activations are scalars here; the identities are elementwise, so they hold
for vectors too.  The cryptographic version uses XOR instead of addition.

References: the lecture, 02:04-02:13; Feistel 1973, "Cryptography and Computer Privacy"; Gomez et
al. 2017, "The Reversible Residual Network: Backpropagation Without Storing Activations" (NeurIPS;
reversible backpropagation needs about 4N operations against 3N, roughly a third more).
"""

from __future__ import annotations

import sympy as sp

from derive import Assumption, Claim, Definition, Quantity, lecture, logic, paper

from .scaling import N_act, c_train, pretrain_tokens

CHAPTER = "Convergent evolution between neural nets and cryptography"
GOMEZ = "Gomez et al. 2017, The Reversible Residual Network: Backpropagation Without Storing Activations"

cipher_net_analogies = Assumption(
    "revnets.cipher_net_analogies", title="Ciphers and nets: the same mixing, opposite goals",
    statement="Both a block cipher and a neural network mix information across all their inputs.  A net "
              "wants smooth, learnable derivatives (residual connections and normalisation help); a cipher "
              "wants a tiny input change to scramble the whole output.  Differential cryptanalysis, one of "
              "the strongest attacks on ciphers, is in effect differentiating the cipher over the field of "
              "two elements; adversarial examples are the nets' version of the avalanche property.  Most new "
              "ciphers ('99% of them') get broken.",
    source=lecture("02:04-02:08", CHAPTER),
)

# ---------------------------------------------------------------------------------------------------
# The Feistel round
# ---------------------------------------------------------------------------------------------------
f = sp.Function("f")
F_ = sp.Function("F")
G_ = sp.Function("G")

half_left = Quantity("feistel_left", "x", "1", "the half passed through unchanged (and fed to f)", domain="real")
half_right = Quantity("feistel_right", "y", "1", "the half that f(x) is added to", domain="real")
feistel_out_q = Quantity("feistel_right_out", "z", "1", "the right half after one Feistel round: y + f(x)",
                         domain="real")
feistel_back_q = Quantity("feistel_right_recovered", r"\hat{y}", "1", "the right half recomputed from (x, z)",
                          domain="real")
x, y = half_left.sym, half_right.sym

feistel_right_out = Definition(
    "revnets.feistel_right_out", title="One Feistel round",
    statement="Keep x; replace y by y + f(x).",
    source=lecture("02:09", CHAPTER), defines=feistel_out_q, expr=y + f(x),
)
feistel_right_recovered = Definition(
    "revnets.feistel_right_recovered", title="Undoing the round",
    statement="x is still there, so f(x) can be recomputed and subtracted: z − f(x).",
    source=lecture("02:09", CHAPTER), defines=feistel_back_q, expr=feistel_out_q.sym - f(x),
)
feistel_inverse = Claim(
    "revnets.feistel_inverse", title="A Feistel round is invertible for any f",
    statement=r"Subtracting \(f(x)\) from \(z = y + f(x)\) gives back \(y\), whatever the function \(f\) is: "
              r"\(f\) itself need not be invertible.  (Ciphers use XOR where this uses addition.)",
    source=lecture("02:09-02:10", CHAPTER),
    goal=logic.eq(feistel_back_q.sym, y),
)

# ---------------------------------------------------------------------------------------------------
# The RevNet block
# ---------------------------------------------------------------------------------------------------
rev_x1 = Quantity("revnet_in_first", "x_{1}", "1", "first half of a RevNet block's input", domain="real")
rev_x2 = Quantity("revnet_in_second", "x_{2}", "1", "second half of a RevNet block's input", domain="real")
rev_y1_q = Quantity("revnet_out_first", "y_{1}", "1", "first half of the block's output: x1 + F(x2)",
                    domain="real")
rev_y2_q = Quantity("revnet_out_second", "y_{2}", "1", "second half of the block's output: x2 + G(y1)",
                    domain="real")
rev_x2_back_q = Quantity("revnet_second_recovered", r"\hat{x}_{2}", "1", "x2 recomputed from the outputs",
                         domain="real")
rev_x1_back_q = Quantity("revnet_first_recovered", r"\hat{x}_{1}", "1", "x1 recomputed from the outputs",
                         domain="real")
x1, x2 = rev_x1.sym, rev_x2.sym
y1, y2 = rev_y1_q.sym, rev_y2_q.sym

revnet_out_first = Definition(
    "revnets.revnet_out_first", title="RevNet block, first half",
    statement="The second half goes through F and is added to the first half.",
    source=paper(GOMEZ, "additive coupling, eq. (2)"), defines=rev_y1_q, expr=x1 + F_(x2),
)
revnet_out_second = Definition(
    "revnets.revnet_out_second", title="RevNet block, second half",
    statement="The new first half goes through G and is added to the second half.",
    source=paper(GOMEZ, "additive coupling, eq. (2)"), defines=rev_y2_q, expr=x2 + G_(y1),
)
revnet_second_recovered = Definition(
    "revnets.revnet_second_recovered", title="Recomputing x2",
    statement=r"\(y_{1}\) is an output, so \(G(y_{1})\) can be recomputed and subtracted from \(y_{2}\).",
    source=paper(GOMEZ, "inverse, eq. (3)"), defines=rev_x2_back_q, expr=y2 - G_(y1),
)
revnet_first_recovered = Definition(
    "revnets.revnet_first_recovered", title="Recomputing x1",
    statement=r"With \(x_{2}\) recovered, \(F(x_{2})\) can be recomputed and subtracted from \(y_{1}\).",
    source=paper(GOMEZ, "inverse, eq. (3)"), defines=rev_x1_back_q, expr=y1 - F_(rev_x2_back_q.sym),
)
revnet_inverse_second_half = Claim(
    "revnets.revnet_inverse_second_half", title="The block's outputs give back x2",
    statement=r"\(y_{2} - G(y_{1}) = x_{2}\) for any functions \(F\) and \(G\).",
    source=lecture("02:10:41", CHAPTER),
    goal=logic.eq(rev_x2_back_q.sym, x2),
    uses=(feistel_inverse,),
)
revnet_invertibility = Claim(
    "revnets.revnet_invertibility", title="RevNet invertibility", label="RevNet invertibility",
    statement=r"A RevNet block is two Feistel rounds: from its outputs \((y_{1}, y_{2})\) the inputs come back "
              r"as \(x_{2} = y_{2} - G(y_{1})\) and then \(x_{1} = y_{1} - F(x_{2})\), for any residual functions "
              r"\(F\) and \(G\).  So the "
              "activations of every layer can be recomputed from those of the layer above.",
    source=lecture("02:10:41-02:11", CHAPTER),
    goal=logic.eq(rev_x1_back_q.sym, x1),
    uses=(feistel_inverse, revnet_inverse_second_half),
    notes=r"The lecture's single-function form \((x, y) \mapsto (y + f(x), x)\) is the case \(G = 0\) followed by "
          "a swap.",
)

# ---------------------------------------------------------------------------------------------------
# Memory for compute (#51)
# ---------------------------------------------------------------------------------------------------
network_depth = Quantity("network_depth", r"n_{\mathrm{layers}}", "1",
                         "layers whose activations a standard backward pass keeps", integer=True)
activation_bytes_per_layer = Quantity("activation_bytes_per_layer", "a", "byte",
                                      "activation bytes one layer keeps for the backward pass", display_unit="GB")
revnet_resident_layers = Quantity(
    "revnet_resident_layers", r"n_{\mathrm{rev}}", "1",
    "layers' worth of activations a RevNet keeps: the current block's input and output",
    value=2, source=lecture("02:11-02:12", CHAPTER, reconstructed=True),
)
revnet_train_flops_per_param_token = Quantity(
    "revnet_train_flops_per_param_token", r"c_{\mathrm{rev}}", "FLOP/(param*token)",
    "training FLOPs per parameter per token when every layer is recomputed once in the backward pass",
    value=8, source=paper(GOMEZ, "reversible backprop about 4N operations against 3N (section 3)"),
)
activation_memory_standard_q = Quantity("activation_memory_standard", r"M_{\mathrm{std}}", "byte",
                                        "activations stored for the backward pass, standard network",
                                        display_unit="GB")
activation_memory_revnet_q = Quantity("activation_memory_revnet", r"M_{\mathrm{rev}}", "byte",
                                      "activations stored for the backward pass, RevNet", display_unit="GB")
revnet_train_compute_q = Quantity("revnet_train_compute", r"C_{\mathrm{rev}}", "FLOP",
                                  "training compute with every layer recomputed once", display_unit="EFLOP")
n_layers, a_layer = network_depth.sym, activation_bytes_per_layer.sym
M_std, M_rev = activation_memory_standard_q.sym, activation_memory_revnet_q.sym

activation_memory_standard = Definition(
    "revnets.activation_memory_standard", title="Stored activations, standard network",
    statement="Every layer's activations are kept until the backward pass reaches it: linear in depth.",
    source=lecture("02:11", CHAPTER), defines=activation_memory_standard_q, expr=n_layers * a_layer,
)
activation_memory_revnet = Definition(
    "revnets.activation_memory_revnet", title="Stored activations, RevNet",
    statement="Only the block being processed is resident; the rest are recomputed from the layer above "
              "in lockstep with the backward pass.",
    source=lecture("02:11-02:12", CHAPTER), defines=activation_memory_revnet_q,
    expr=revnet_resident_layers.sym * a_layer,
)
revnet_train_compute = Definition(
    "revnets.revnet_train_compute", title="Training compute of a RevNet",
    statement="Forward (2), backward (4) and one recomputed forward (2) FLOPs per parameter per token.",
    source=lecture("02:12", CHAPTER, reconstructed=True), defines=revnet_train_compute_q,
    expr=revnet_train_flops_per_param_token.sym * N_act * pretrain_tokens.sym,
)
memory_for_compute_profitable = Assumption(
    "revnets.memory_for_compute_profitable", title="Spending memory to save compute usually pays",
    statement="The KV cache is the opposite trade to a RevNet: it spends memory to avoid recomputation, and "
              "on today's hardware spending memory to save compute is generally the profitable direction.  "
              "RevNets pay off when activation memory, which can be the largest footprint in training, is the "
              "binding constraint.",
    source=lecture("02:12-02:13", CHAPTER),
)
revnet_memory_tradeoff = Claim(
    "revnets.revnet_memory_tradeoff", title="RevNets: constant activation memory for a third more compute",
    statement="A standard network stores activations linear in its depth; a RevNet stores a constant two "
              "layers' worth, so from three layers on it stores less, by a factor of depth/2.  The price is "
              r"one extra forward pass per layer: \(8 N D\) training FLOPs instead of \(6 N D\), a third more.",
    source=lecture("02:11-02:13", CHAPTER),
    hypotheses=(logic.ge(n_layers, 3),),
    goal=logic.And((
        logic.lt(M_rev, M_std),
        logic.eq(M_std / M_rev, n_layers / 2),
        logic.eq(revnet_train_compute_q.sym, sp.Rational(4, 3) * c_train * N_act * pretrain_tokens.sym),
    )),
    uses=(revnet_invertibility, memory_for_compute_profitable),
    notes="The compute overhead is reconstructed (not said): Gomez et al. count about 4N against 3N "
          "operations for reversible backpropagation.",
)

# The chapter's argument, for part I of the documents (placeholders: derive.model.prose) ------------------
PROSE = (
    r"The lecture's last chapter (from minute 124) steps sideways, to cryptography.  Ciphers and neural networks "
    r"both mix every input into every output, with opposite aims: a network wants smooth derivatives it can "
    r"learn from, a cipher wants a one-bit change to scramble everything.  One construction crossed over.  A "
    r"Feistel round keeps one half \(x\) and adds \(f(x)\) to the other; since \(x\) survives, \(f(x)\) can be "
    r"recomputed and subtracted, so the round is invertible whatever \(f\) is.  A reversible residual network "
    r"stacks two such rounds per block, with its residual functions \(F\) and \(G\) in the role of \(f\).",
    "{{result:revnet_invertibility}}",
    "The trade is compute for memory.  Stored activations, linear in depth and often the largest memory "
    "footprint in training, shrink to a constant, at the price of one extra forward pass per layer, about a "
    "third more training compute.  The KV cache makes the opposite trade, memory for compute, and the lecture's "
    "view of today's hardware is that spending memory to save compute usually pays; RevNets pay where activation "
    "memory is what binds.",
)
