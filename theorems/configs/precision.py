"""Bytes per weight and per cached element from ``torch_dtype`` and ``quantization_config``.

``torch_dtype`` (or ``dtype``) sets the bytes of a weight and of a cached element, as a serving engine keeps them
(a float32 checkpoint in 16 bits: ``base.SERVED_BYTES``); ``quantization_config``
refines the weights: ``fp8`` (1 byte, plus one FP32 scale per ``weight_block_size`` block), ``mxfp4``
(4.25 bits: 32 four-bit values share an 8-bit scale, OCP Microscaling Formats v1.0; on the routed experts,
as gpt-oss ships it), ``awq``/``gptq`` (``bits`` plus an FP16 scale and a ``bits`` zero point per
``group_size``), ``bitsandbytes`` (4 or 8 bits, block scales not counted), ``compressed-tensors``;
embeddings, LM head and the modules in ``modules_to_not_convert`` stay at ``torch_dtype``.

``dispatch_element_bytes`` reads the datatype of a mixture of experts' dispatch (the hidden vectors sent to the
routed experts): FP8 where ``quantization_config`` quantizes the activations to FP8 (``activation_scheme``), with
one scale per ``weight_block_size[1]`` elements (FP32, or one byte where ``scale_fmt`` is ``ue8m0``), as DeepSeek-V3
quantizes activations in 1x128 tiles and DeepEP sends them; else BF16, the datatype a link carries per token.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from derive.errors import ScenarioError

from .base import DTYPE_BYTES, SERVED_BYTES, ParamBreakdown, num


@dataclass(frozen=True)
class Precision:
    bytes_per_param: Fraction | None
    param_note: str
    bytes_per_kv_element: Fraction | None
    kv_note: str
    notes: tuple[str, ...]
    checkpoint: Fraction | None = None  # the mean over every weight (the file's size), where bytes_per_param is less


def dtype(cfg: Mapping[str, Any], where: str) -> tuple[str | None, Fraction | None]:
    """The config's datatype, and the bytes a serving engine keeps its weights and KV cache in (``SERVED_BYTES``:
    a float32 checkpoint's in 16 bits; ``served`` says so)."""
    for key in ("torch_dtype", "dtype"):
        value = cfg.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ScenarioError(f"field '{key}' must be a datatype name, got {value!r}", where=where)
        name = value.removeprefix("torch.")
        if name not in DTYPE_BYTES:
            raise ScenarioError(f"field '{key}' names an unknown datatype {value!r}", where=where,
                                hint=f"known: {', '.join(sorted(DTYPE_BYTES))}")
        return name, SERVED_BYTES[name]
    return None, None


def served(name: str | None) -> tuple[str | None, str | None]:
    """``name`` as the values' notes say it (``float32, served in 16 bits`` where a serving engine runs it narrower
    than named, ``SERVED_BYTES``), and the note saying so (None where it runs as named)."""
    if name is None or SERVED_BYTES[name] == DTYPE_BYTES[name]:
        return name, None
    wide = num(DTYPE_BYTES[name])
    return f"{name}, served in 16 bits", (
        f"torch_dtype {name}: weights and KV cache counted at {num(SERVED_BYTES[name])} bytes, as serving engines run "
        f"a {name} checkpoint in 16 bits (vLLM's --dtype auto, SGLang, TGI); --set bytes_per_param={wide} and "
        f"bytes_per_kv_element={wide} for a {name} run")


def _not_converted(q: Mapping[str, Any], where: str) -> set[str]:
    """The parameter groups ``modules_to_not_convert`` keeps at the model's datatype."""
    out: set[str] = set()
    # the key each scheme's files use: transformers' AWQ/GPTQ/FP8, compressed-tensors, ModelOpt, bitsandbytes
    patterns = (q.get("modules_to_not_convert") or q.get("ignore") or q.get("exclude_modules")
                or q.get("llm_int8_skip_modules") or ())
    if isinstance(patterns, (str, Mapping)) or not isinstance(patterns, Sequence):
        raise ScenarioError(f"quantization_config: modules_to_not_convert/ignore must be a list of module names, got "
                            f"{patterns!r}", where=where)
    for pattern in patterns:
        p = str(pattern).removeprefix("re:").rstrip("$")
        # norms, biases and correction terms are not weight matrices (compressed-tensors lists each one:
        # "model.layers.11.self_attn.k_proj.bias", "model.layers.5.self_attn.q_norm")
        if "norm" in p or p.endswith("bias") or p.endswith("sinks"):
            continue
        if p.rstrip(".*$").endswith(("attn", "attention")):  # the whole attention block
            out.add("attention")
        if "router" in p or p.endswith("mlp.gate") or "gate.weight" in p:
            out.add("router")
        if "shared_expert" in p:
            out.add("shared")
        elif "expert" not in p and re.search(r"mlp\\?\.", p) and "_proj" in p and not re.search(r"\.\d", p):
            # every layer's dense MLP as a pattern (Kimi-K2.5's "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"): the
            # experts sit under mlp.experts, which it does not reach; a name with a layer index is one layer's only
            out.add("dense")
        if "embed" in p:
            out.add("embedding")
        if "lm_head" in p:
            out.add("lm_head")
    return out


def precision(cfg: Mapping[str, Any], pb: ParamBreakdown, where: str) -> Precision:
    name, base = dtype(cfg, where)
    name, narrower = served(name)  # the name as the notes below say it
    notes: list[str] = [narrower] if narrower else []
    q = cfg.get("quantization_config")
    if q is not None and not isinstance(q, Mapping):
        raise ScenarioError(f"field 'quantization_config' must be an object, got {q!r}", where=where)
    kv_bytes, kv_note = base, f"torch_dtype {name}: the KV cache is kept in the model's datatype" if name else ""
    if base is None and q is None:
        return Precision(None, "", None, "", ("config gives no torch_dtype: bytes per weight come from the "
                                               "scenario",))
    weight_base = base if base is not None else Fraction(2)
    if base is None:
        notes.append("config gives no torch_dtype: unquantized weights counted at 2 bytes (bf16)")
    groups = {"embedding": pb.lookup, "lm_head": pb.lm_head, "attention": pb.attention, "dense": pb.dense_mlp,
              "experts": pb.routed_experts, "shared": pb.shared_experts, "router": pb.router,
              "per_layer_inputs": pb.per_layer_inputs}
    if q is None:
        return Precision(weight_base, f"torch_dtype {name}: {num(weight_base)} B per weight", kv_bytes, kv_note,
                          tuple(notes), checkpoint=weight_base)
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    if method == "modelopt" and str(q.get("quant_algo") or "").upper() == "FP8":
        method = "fp8"  # ModelOpt's FP8: one byte per weight, as the flat form {"quant_algo": "FP8"} reads
    # Embeddings, LM head and routers stay at the model's datatype in every scheme modelled here.
    keep = _not_converted(q, where) | {"embedding", "lm_head", "router"}
    quant_bytes: Fraction | None = None
    what = ""
    weights_untouched = False  # a compressed-tensors file that quantizes only the KV cache
    if method == "mxfp4":
        quant_bytes = Fraction(17, 32)  # 32 four-bit values + one 8-bit scale = 4.25 bits each
        keep |= {"attention"}  # gpt-oss quantizes the MoE experts only
        what = "MXFP4 (4-bit values, one 8-bit scale per 32: 4.25 bits)"
    elif method in ("fp8", "fbgemm_fp8"):
        block = q.get("weight_block_size")
        if block is not None and not (isinstance(block, Sequence) and len(block) == 2
                                      and all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block)):
            # [128, true] read as a 128x1 block, a string or [0, 128] as per-tensor scales: each silently
            raise ScenarioError(f"quantization_config: weight_block_size must be two whole numbers, got {block!r}",
                                where=where)
        if isinstance(block, Sequence) and len(block) == 2 and all(isinstance(b, int) and b > 0 for b in block):
            quant_bytes = 1 + Fraction(4, block[0] * block[1])
            what = f"FP8 with one FP32 scale per {block[0]}x{block[1]} block"
        else:
            quant_bytes = Fraction(1)
            what = "FP8 (per-tensor or per-channel scales not counted)"
    elif method in ("awq", "gptq"):
        bits = q.get("bits", q.get("w_bit"))
        group = q.get("group_size", q.get("q_group_size"))
        if not isinstance(bits, int) or isinstance(bits, bool) or not 1 <= bits <= 16:
            raise ScenarioError(f"quantization_config: {method} needs 'bits', got {bits!r}", where=where)
        if group is not None and (isinstance(group, bool) or not isinstance(group, int) or group == 0 or group < -1):
            # -1 is GPTQ's per-channel; 0, true, "128" or 1.5 read as per-channel scales, silently
            raise ScenarioError(f"quantization_config: {method} group_size must be a whole number of weights (or -1 "
                                f"for per-channel scales), got {group!r}", where=where)
        if isinstance(group, int) and not isinstance(group, bool) and group > 0:
            quant_bytes = Fraction(bits, 8) + (2 + Fraction(bits, 8)) / group
            what = f"{method.upper()} {bits}-bit, an FP16 scale and a {bits}-bit zero point per {group} weights"
        else:
            quant_bytes = Fraction(bits, 8)
            what = f"{method.upper()} {bits}-bit (per-channel scales not counted)"
    elif method == "modelopt":
        quant_bytes, what = _modelopt(q, where)
    elif method == "bitsandbytes":
        for flag in ("load_in_4bit", "load_in_8bit", "bnb_4bit_use_double_quant"):
            if q.get(flag) is not None and not isinstance(q[flag], bool):  # "no" would read as true
                raise ScenarioError(f"quantization_config: bitsandbytes {flag} must be true or false, got "
                                    f"{q[flag]!r}", where=where, hint="write a JSON boolean, unquoted")
        if q.get("load_in_4bit"):
            # NF4/FP4 in blocks of 64, each with its absmax: one FP32, or with double quantization one byte plus
            # an FP32 per 256 blocks (bitsandbytes' serialized quant_state; per-tensor constants not counted)
            if q.get("bnb_4bit_use_double_quant"):
                quant_bytes = Fraction(1, 2) + Fraction(1, 64) + Fraction(4, 64 * 256)
                what = "bitsandbytes 4-bit, a one-byte absmax per 64 weights and an FP32 per 256 blocks"
            else:
                quant_bytes = Fraction(1, 2) + Fraction(4, 64)
                what = "bitsandbytes 4-bit, an FP32 absmax per 64 weights"
        elif q.get("load_in_8bit"):
            quant_bytes, what = Fraction(1), "bitsandbytes 8-bit (one FP32 scale per row not counted)"
        else:
            raise ScenarioError("quantization_config: bitsandbytes with neither load_in_4bit nor load_in_8bit true: "
                                "its bytes per weight cannot be read", where=where,
                                hint="a bitsandbytes checkpoint says load_in_4bit or load_in_8bit")
    elif method == "compressed-tensors":
        if not isinstance(q.get("config_groups") or {}, Mapping):
            raise ScenarioError(f"quantization_config: config_groups must be an object, got {q['config_groups']!r}",
                                where=where)
        config_groups = (q.get("config_groups") or {}).values()
        odd = next((g for g in config_groups
                    if not (isinstance(g, Mapping) and isinstance(g.get("weights"), (Mapping, type(None))))), None)
        if odd is not None:  # a group read as none at all would leave the weights at the checkpoint's datatype
            raise ScenarioError(f"quantization_config: a compressed-tensors config group must be an object whose "
                                f"weights is an object, got {odd!r}", where=where)
        schemes = {_compressed_weights(g["weights"], weight_base, where)
                   for g in config_groups if isinstance(g.get("weights"), Mapping)}
        if len(schemes) > 1:
            raise ScenarioError("quantization_config: compressed-tensors config_groups quantize weights in "
                                f"{len(schemes)} different ways ({'; '.join(sorted(w for _, w in schemes))}): "
                                "which weights each group targets is not read", where=where,
                                hint="--set bytes_per_param=... for this checkpoint")
        if schemes:
            quant_bytes, what = next(iter(schemes))
        weights_untouched = not schemes
        scheme = q.get("kv_cache_scheme")
        kv_bits = scheme.get("num_bits") if isinstance(scheme, Mapping) else None
        if kv_bits is not None and (isinstance(kv_bits, bool) or not isinstance(kv_bits, int)
                                    or not 1 <= kv_bits <= 16):
            raise ScenarioError(f"quantization_config: kv_cache_scheme needs 'num_bits' from 1 to 16, got {kv_bits!r}",
                                where=where)
        if isinstance(scheme, Mapping) and isinstance(scheme.get("num_bits"), int):
            kv_bytes = Fraction(scheme["num_bits"], 8)
            kv_note = f"kv_cache_scheme: {scheme['num_bits']}-bit KV cache"
    if str(q.get("kv_cache_quant_algo") or "").upper() == "FP8":
        kv_bytes, kv_note = Fraction(1), "kv_cache_quant_algo FP8: 1 byte per cached element"
    if weights_untouched:  # only the KV cache (kv_cache_scheme): the weights keep the model's datatype
        return Precision(weight_base, f"torch_dtype {name}: {num(weight_base)} B per weight (quantization_config "
                                      "quantizes no weight)", kv_bytes, kv_note, tuple(notes), checkpoint=weight_base)
    if quant_bytes is None:
        # a scheme not modelled here: its bytes per weight would be a guess, and the model's datatype is not it
        raise ScenarioError(f"quantization_config: quant_method {q.get('quant_method', q.get('quant_algo'))!r} is "
                            "not read: its bytes per weight cannot be determined", where=where,
                            hint="read: fp8, mxfp4, awq, gptq, bitsandbytes, compressed-tensors, modelopt (FP8, "
                                 "NVFP4); --set bytes_per_param=... and drop quantization_config for another")
    quantized = sum(v for k, v in groups.items() if k not in keep)
    plain = pb.total - quantized
    total_bytes = quantized * quant_bytes + plain * weight_base
    mean = total_bytes / pb.total if pb.total else weight_base
    kept = ", ".join(sorted(k for k in keep if groups.get(k))) or "nothing"
    note = (f"{num(quantized)} weights in {what} at {num(quant_bytes)} B + {num(plain)} ({kept}) at "
            f"{num(weight_base)} B = {float(mean):.4g} B per weight on average")
    read = _read_mean(pb, keep, quant_bytes, weight_base)
    if read is not None and read < mean:
        # the floors multiply the weights a step reads by bytes_per_param: the checkpoint's mean counts the lookup
        # tables (kept wide, never read whole), so it sits above what a step reads; the smaller mean keeps them
        # floors, and makes the weights' memory a lower bound
        note = (f"{float(read):.4g} B per weight a decode step reads (whatever share of the routed experts it "
                f"reads); the checkpoint's mean over every weight, {float(mean):.4g} B ({note.rsplit(' = ', 1)[0]}), "
                f"counts its lookup tables, kept at {num(weight_base)} B and never read whole: the weights' memory, "
                f"params_total x bytes_per_param, is then {_bytes(pb.total * (mean - read))} low, a lower bound")
        return Precision(read, note, kv_bytes, kv_note, tuple(notes), checkpoint=mean)
    return Precision(mean, note, kv_bytes, kv_note, tuple(notes), checkpoint=mean)


def _read_mean(pb: ParamBreakdown, keep: set[str], quant_bytes: Fraction, weight_base: Fraction) -> Fraction | None:
    """The least mean bytes per weight over the weights a decode step reads: the output head and every multiplied
    weight, with one token's routed experts or every routed expert (the mean moves monotonically between them as
    the step reads more experts); the lookup tables (input, per-layer and position embeddings) left out.  None for
    a model with no such weight."""
    def width(group: str) -> Fraction:
        return weight_base if group in keep else quant_bytes

    head = (pb.embedding, "embedding") if pb.tied else (pb.lm_head, "lm_head")
    always = [head, (pb.attention, "attention"), (pb.dense_mlp, "dense"), (pb.shared_experts, "shared"),
              (pb.router, "router"), (pb.per_layer_inputs, "per_layer_inputs")]
    count = sum(n for n, _ in always)
    weight = sum(n * width(g) for n, g in always)
    means = [(weight + e * width("experts")) / (count + e)
             for e in (pb.routed_experts_active, pb.routed_experts) if count + e > 0]
    return min(means) if means else None


def _bytes(size: Fraction) -> str:
    from derive.model.display import format_value  # the prefixes every printed number takes (725 MB, 1.67 GB)

    return format_value(sp.Rational(size.numerator, size.denominator), "B")


def _compressed_weights(w: Mapping[str, Any], weight_base: Fraction, where: str) -> tuple[Fraction, str]:
    """Bytes per weight of one compressed-tensors ``weights`` scheme: ``num_bits``, and where scales come per group
    of ``group_size`` weights (strategy ``group`` / ``tensor_group``) one scale per group, an FP8 byte for 4-bit
    floats (NVFP4) else the model's datatype, and a ``num_bits`` zero point when not ``symmetric``.  Per-channel,
    per-tensor and per-block scales (one per row or per 128 x 128 weights or fewer) are not counted."""
    b = w.get("num_bits")
    if b is None or isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 16:
        # 0 bits read as weights that take no memory; true as 1 bit
        raise ScenarioError(f"quantization_config: compressed-tensors weights need 'num_bits' from 1 to 16, got {b!r}",
                            where=where)
    per = Fraction(b, 8)
    strategy, group = w.get("strategy"), w.get("group_size")
    if strategy in ("group", "tensor_group") or (strategy is None and group is not None):
        if isinstance(group, bool) or not isinstance(group, int) or group < 1:
            raise ScenarioError(f"quantization_config: compressed-tensors {strategy or 'group'} scales need a "
                                f"'group_size' of at least 1 weight, got {group!r}", where=where)
        float4 = w.get("type") == "float" and b == 4
        scale = Fraction(1) if float4 else weight_base
        zero = Fraction(0) if w.get("symmetric", True) else Fraction(b, 8)
        words = (f"compressed-tensors {b}-bit {w.get('type') or 'int'} weights, one "
                 f"{'FP8' if float4 else num(weight_base) + ' B'} scale"
                 + ("" if not zero else f" and a {b}-bit zero point") + f" per {group}")
        return per + (scale + zero) / group, words
    return per, f"compressed-tensors {b}-bit weights ({strategy or 'per-tensor'} scales not counted)"


def _modelopt(q: Mapping[str, Any], where: str) -> tuple[Fraction, str]:
    """NVIDIA ModelOpt's ``quant_algo``: FP8 (one byte, per-tensor scales not counted) or NVFP4 (4-bit floats with
    an FP8 scale per ``group_size``, 16 by default, and per-tensor FP32 scales not counted)."""
    algo = str(q.get("quant_algo") or "").upper()
    if algo == "FP8":
        return Fraction(1), "ModelOpt FP8 (per-tensor scales not counted)"
    if algo in ("NVFP4", "W4A16_NVFP4"):
        group = q.get("group_size", 16)
        if isinstance(group, bool) or not isinstance(group, int) or group < 1:
            raise ScenarioError(f"quantization_config: ModelOpt NVFP4 needs a 'group_size' of at least 1, got "
                                f"{group!r}", where=where)
        return Fraction(1, 2) + Fraction(1, group), f"ModelOpt NVFP4 (4-bit floats, an FP8 scale per {group})"
    raise ScenarioError(f"quantization_config: ModelOpt quant_algo {q.get('quant_algo')!r} is not read: its bytes "
                        "per weight cannot be determined", where=where,
                        hint="read: FP8, NVFP4; --set bytes_per_param=... and drop quantization_config for another")


def dispatch_element_bytes(cfg: Mapping[str, Any]) -> tuple[Fraction, str]:
    """Bytes one element of a token's hidden vector takes in the expert-parallel dispatch, scales included, and
    how the config says so (the config was read by ``precision`` first, so its fields are well formed)."""
    q = cfg.get("quantization_config")
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower() if isinstance(q, Mapping) else ""
    if method in ("fp8", "fbgemm_fp8") and q.get("activation_scheme"):
        block = q.get("weight_block_size")
        if isinstance(block, Sequence) and len(block) == 2:
            k = block[1]
            ue8m0 = str(q.get("scale_fmt") or "").lower() == "ue8m0"
            scale, scale_name = (Fraction(1), "UE8M0 (1 B)") if ue8m0 else (Fraction(4), "FP32 (4 B)")
            value = 1 + scale / k
            return value, (f"dispatch in FP8 with one {scale_name} scale per {k} elements (quantization_config "
                           f"fp8, activation_scheme {q['activation_scheme']}, weight_block_size {list(block)}): "
                           f"{num(value)} B per element; --set dispatch_bytes_per_element=... for yours")
        return Fraction(1), (f"dispatch in FP8 (quantization_config fp8, activation_scheme "
                             f"{q['activation_scheme']}): 1 B per element, per-tensor scales not counted")
    return Fraction(2), ("dispatch in BF16 (2 B per element), the datatype a link carries per token "
                         "(token_activation_bytes); --set dispatch_bytes_per_element=... for an FP8 dispatch")
