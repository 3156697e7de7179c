"""What every family module shares: the results, field access, attention, and the ``Family`` record.

A family module (``dense``, ``gemma``, ``deepseek``, ...) says how its ``model_type`` values lay out their
layers: which attention, which layer kinds in which pattern, which MLP or experts.  ``reader`` runs the
same steps for every family; nothing here knows a particular model.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from derive.errors import ScenarioError
from derive.model.display import format_number

MAX_LAYERS = 100_000
MAX_SIZE = 2**40  # widths, vocabularies, expert counts: far above any real model


@dataclass(frozen=True)
class ConfigValue:
    """One quantity read from a config: exact value in SI base units, its unit, and how it was derived.

    ``native`` marks values that describe the model's own precision and context (bytes per weight, bytes
    per cached element, maximum context): the scenario lets them replace the lecture's round numbers and
    a hardware preset's, never a value the user gave.
    """

    value: Fraction
    unit: str
    note: str
    native: bool = False


class ModelValues(dict):
    """``model_values``' result: quantity name -> ``ConfigValue``, plus ``notes`` (every default and
    approximation the reader applied, one sentence each)."""

    notes: tuple[str, ...] = ()


DTYPE_BYTES: dict[str, Fraction] = {
    "float32": Fraction(4), "float": Fraction(4), "fp32": Fraction(4),
    "bfloat16": Fraction(2), "bf16": Fraction(2), "float16": Fraction(2), "half": Fraction(2), "fp16": Fraction(2),
    "float8_e4m3fn": Fraction(1), "float8_e5m2": Fraction(1), "fp8": Fraction(1), "int8": Fraction(1),
}
# The bytes a serving engine keeps a checkpoint's weights and KV cache in, by the config's datatype: its own, but
# a float32 checkpoint runs in 16 bits (vLLM's --dtype auto: "FP16 precision for FP32 and FP16 models"; SGLang and
# TGI alike), so a floor never counts 4-byte weights a server does not read.  A recurrent state a config keeps
# in a datatype of its own (``state_dtype_bytes``) is kept as named.
SERVED_WIDEST = Fraction(2)
SERVED_BYTES: dict[str, Fraction] = {k: min(v, SERVED_WIDEST) for k, v in DTYPE_BYTES.items()}


# --------------------------------------------------------------------------------------------------
# the results


@dataclass(frozen=True)
class ParamBreakdown:
    """A parameter count split into parts (all in parameters, all layers summed)."""

    model_type: str
    layers: int
    embedding: int  # input token embedding
    lm_head: int  # 0 when tied to the embedding
    attention: int  # every attention block: full, windowed, chunked, latent, linear, indexer
    dense_mlp: int  # MLPs of the dense (non-MoE) layers
    routed_experts: int  # every routed expert of every MoE layer
    routed_experts_active: int  # the routed experts one token uses
    shared_experts: int
    router: int
    moe_layers: int
    experts_total: int  # routed experts per MoE layer (0 for a dense model)
    experts_active: int
    experts_shared: int
    notes: tuple[str, ...]  # defaults applied and conventions, for the values' notes
    tied: bool = False  # the LM head is the embedding matrix
    # Gemma 4 E2B/E4B: a second table looked up per token (one row of layers x width), and the projections
    # that feed its rows into every layer (multiplied like any other weight)
    per_layer_embedding: int = 0
    per_layer_inputs: int = 0
    per_layer_row: int = 0  # parameters of one token's row of the per-layer table
    # a learned position table (GPT-2's wpe, OPT's embed_positions): looked up per position, like the token table
    position_embedding: int = 0

    @property
    def total(self) -> int:
        """Every counted weight, embeddings included (the publishers' totals)."""
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp + self.routed_experts
                + self.shared_experts + self.router + self.per_layer_embedding + self.per_layer_inputs
                + self.position_embedding)

    @property
    def lookup(self) -> int:
        """The tables a token looks up rather than multiplies: the input embedding, a per-layer one, a learned
        position table."""
        return self.embedding + self.per_layer_embedding + self.position_embedding

    @property
    def active_with_embedding(self) -> int:
        """Every weight on a token's path, the input embedding included."""
        return self.total - self.routed_experts + self.routed_experts_active

    @property
    def active(self) -> int:
        """What a token's forward pass multiplies: no input embedding and no per-layer table (lookups), the
        output head included (with tied embeddings the head is the embedding matrix, so it stays)."""
        return (self.active_with_embedding - (0 if self.tied else self.embedding) - self.per_layer_embedding
                - self.position_embedding)

    @property
    def output_head(self) -> int:
        """The weights of the output head: its own matrix, or the embedding matrix where tied to it."""
        return self.embedding if self.tied else self.lm_head

    @property
    def total_non_embedding(self) -> int:
        return self.total - self.embedding - self.lm_head - self.per_layer_embedding - self.position_embedding

    @property
    def active_non_embedding(self) -> int:
        return (self.active_with_embedding - self.embedding - self.lm_head - self.per_layer_embedding
                - self.position_embedding)

    @property
    def is_moe(self) -> bool:
        return self.moe_layers > 0


@dataclass(frozen=True)
class KVLayout:
    """The KV cache by layer kind: layer counts and elements, summed over the layers of each kind.

    Elements are per token of context (full, window, chunk) or per sequence (state); they take the KV
    element size.  ``indexer_bytes_per_token`` is already in bytes (its keys are FP8 whatever the KV
    datatype).
    """

    full_layers: int = 0
    full_elements: int = 0
    window_layers: int = 0
    window: int = 0
    window_elements: int = 0
    chunk_layers: int = 0
    chunk: int = 0
    chunk_elements: int = 0
    state_layers: int = 0
    state_elements: int = 0
    indexer_bytes_per_token: Fraction = Fraction(0)
    formulas: tuple[str, ...] = ()
    state_bytes: Fraction = Fraction(0)  # state held in a datatype of its own (Qwen3.5's float32 recurrent state)
    # attention layers that reuse an earlier layer's cache and keep none (Gemma 4's num_kv_shared_layers), by the
    # kind of their attention: counted in no element above
    shared_full_layers: int = 0
    shared_window_layers: int = 0
    # query-head dimensions (layers x query heads x head dimension) of the sliding-window and chunked layers, those
    # reusing a cache included: their attention's FLOPs per context token, over 4 (None: head dimension not read)
    window_query_dims: int | Fraction | None = 0
    chunk_query_dims: int | Fraction | None = 0
    # a sparse attention's (DeepSeek-V3.2): its layers' query-head dimensions at the prefill's head dimension, and
    # the dimensions its indexer scores every context token over (layers x indexer heads x indexer head dimension)
    sparse_query_dims: int | Fraction | None = 0
    indexer_dims: int = 0

    def state_bytes_at(self, bytes_per_element: int | Fraction) -> Fraction:
        """Bytes of the fixed-size linear-attention state of one sequence."""
        return self.state_elements * Fraction(bytes_per_element) + self.state_bytes

    def bytes_per_sequence(self, context: int | Fraction, bytes_per_element: int | Fraction) -> Fraction:
        """KV bytes one sequence holds at ``context`` tokens (the library's ``kv_bytes_per_sequence``)."""
        e, L = Fraction(bytes_per_element), Fraction(context)
        return (L * (self.full_elements * e + self.indexer_bytes_per_token) + min(L, self.window)
                * self.window_elements * e + min(L, self.chunk) * self.chunk_elements * e + self.state_bytes_at(e))


# --------------------------------------------------------------------------------------------------
# field access: every read names the field and where it came from


def count_text(n: int) -> str:
    """A whole number for an error line: in full up to 15 digits (``1,099,511,627,776``), beyond that as the
    display formatter shortens it (``1e300``, not 301 digits)."""
    return f"{n:,}" if abs(n) < 10**15 else format_number(n)


class Fields:
    """Reads of one config's fields; ``read`` keeps every field name looked at, so that the reader can tell
    which fields of an unknown architecture it placed."""

    def __init__(self, config: Mapping[str, Any], where: str, model_type: str) -> None:
        self.config = config
        self.where = where
        self.model_type = model_type
        self.notes: list[str] = []
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return self.config.get(key, default)

    def bad(self, key: str, value: Any, what: str) -> ScenarioError:
        kind = type(value).__name__
        hint = ("a JSON boolean, true or false without quotes" if what == "true or false" else
                "a JSON list, as the model's published config.json writes it" if what.startswith("a list") else
                "a JSON string, as the model's published config.json writes it" if what.startswith("a string") else
                "config.json sizes are JSON numbers")
        return ScenarioError(f"field '{key}' must be {what}, got {value!r} ({kind})", where=self.where, hint=hint)

    def whole(self, key: str, value: Any, minimum: int, maximum: int = MAX_SIZE) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self.bad(key, value, "a whole number")
        try:
            whole = int(value)
        except (OverflowError, ValueError):  # Infinity, NaN: json reads them, a size is never one
            raise self.bad(key, value, "a finite whole number") from None
        if whole != value:
            raise self.bad(key, value, "a whole number")
        if whole < minimum:
            raise ScenarioError(f"field '{key}' must be at least {minimum}, got {count_text(whole)}", where=self.where)
        if whole > maximum:
            raise ScenarioError(f"field '{key}' is {count_text(whole)}, more than {maximum:,}: not a real model",
                                where=self.where)
        return whole

    def has(self, key: str) -> bool:
        self.read.add(key)
        return key in self.config and self.config[key] is not None

    def need(self, key: str, *, minimum: int = 1, maximum: int = MAX_SIZE, why: str = "",
             aliases: Sequence[str] = ()) -> int:
        for name in (key, *aliases):
            if self.has(name):
                return self.whole(name, self.config[name], minimum, maximum)
        hint = f"a {why or self.model_type} config needs '{key}'"
        raise ScenarioError(f"missing field '{key}'", where=self.where, hint=hint)

    def optional(self, key: str, default: int | None, *, minimum: int = 0, meaning: str = "",
                 aliases: Sequence[str] = ()) -> int | None:
        for name in (key, *aliases):
            if self.has(name):
                return self.whole(name, self.config[name], minimum)
        if default is not None and meaning:
            self.notes.append(f"'{key}' absent: {meaning}")
        return default

    def flag(self, key: str, default: bool, meaning: str) -> bool:
        if not self.has(key):
            if meaning:
                self.notes.append(f"'{key}' absent: {meaning}")
            return default
        value = self.config[key]
        if not isinstance(value, bool):
            raise self.bad(key, value, "true or false")
        return value

    def int_list(self, key: str, n_layers: int | None = None) -> list[int]:
        value = self.get(key)
        if value is None:
            return []
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise self.bad(key, value, "a list of layer indices")
        if len(value) > MAX_LAYERS:
            raise ScenarioError(f"field '{key}' lists {len(value):,} entries, more than {MAX_LAYERS:,}",
                                where=self.where)
        return [self.whole(f"{key}[{i}]", v, 0) for i, v in enumerate(value)]

    def str_list(self, key: str, n_layers: int) -> list[str] | None:
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, Sequence) or isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise self.bad(key, value, "a list of strings")
        if len(value) != n_layers:
            raise ScenarioError(f"field '{key}' lists {len(value)} layers but num_hidden_layers is {n_layers}",
                                where=self.where)
        return list(value)


def count_every(n: int, step: int, offset: int = 0) -> int:
    """How many of the layer indices 0..n-1 satisfy (i + offset) % step == 0, computed arithmetically."""
    if step <= 0:
        return 0
    first = (-offset) % step  # smallest i >= 0 with (i + offset) % step == 0
    return 0 if first >= n else (n - 1 - first) // step + 1


def num(x: int | Fraction) -> str:
    """A count for notes, with thousands separators (a fraction as ``p/q``)."""
    if isinstance(x, Fraction) and x.denominator != 1:
        return str(x)
    return f"{int(x):,}"


def bn(x: int | Fraction) -> str:
    """A parameter count in billions, for notes."""
    return f"{float(x) / 1e9:.4g}B"


# --------------------------------------------------------------------------------------------------
# attention, linear attention, MLP


@dataclass(frozen=True)
class Attention:
    params_per_layer: int
    kv_elements_per_layer: int  # per token of context
    kv_formula: str  # e.g. "2 (K and V) * 8 kv heads * 128 head_dim"
    head_dim: int | Fraction | None
    kv_heads: int | None
    query_heads: int
    latent: bool = False  # multi-head latent attention: one cached latent serves keys and values
    # where head_dim and kv_heads come from when not from head_dim and num_key_value_heads (Gemma 4's global
    # layers, MiMo's keys and values of different sizes)
    head_dim_note: str = ""
    kv_heads_note: str = ""
    # the mean of the score and value head dimensions a prefill multiplies over, where it differs from head_dim
    # (latent attention's prefill runs the non-absorbed form, decoding the absorbed one)
    prefill_head_dim: Fraction | None = None


def gqa(f: Fields, d: int, *, gated_query: bool = False, kv_heads: int | None = None) -> Attention:
    """Multi-head, grouped-query or multi-query attention: q, k, v and o projections, ``2 * kv_heads *
    head_dim`` cached elements per token and layer.  ``kv_heads`` given by the family wins over the field."""
    heads = f.need("num_attention_heads", aliases=("n_head",))
    kv = kv_heads if kv_heads is not None else f.optional("num_key_value_heads", None, minimum=1,
                                                          aliases=("num_kv_heads", "n_head_kv"))
    if kv is None:
        kv = heads
        f.notes.append(f"'num_key_value_heads' absent: multi-head attention, {heads} kv heads")
    if heads % kv:
        raise ScenarioError(f"num_attention_heads ({heads}) is not a multiple of num_key_value_heads ({kv})",
                            where=f.where)
    hd = f.optional("head_dim", None, minimum=1)
    if hd is None:
        if d % heads:
            raise ScenarioError(f"missing field 'head_dim' and hidden_size ({d}) is not a multiple of "
                                f"num_attention_heads ({heads})", where=f.where)
        hd = d // heads
        f.notes.append(f"'head_dim' absent: hidden_size / num_attention_heads = {hd}")
    q = d * heads * hd * (2 if gated_query else 1)  # Qwen3-Next/3.5 project a gate with the query
    params = q + 2 * d * kv * hd + heads * hd * d  # q, k and v, o
    return Attention(params, 2 * kv * hd, f"2 (K and V) * {kv} kv heads * {hd} head_dim", hd, kv, heads)


def fixed_heads(f: Fields, mtype: str, d: int, *, hint: str, kv_heads: int | None = None,
                sizes: tuple[str, str] = ("hidden_size", "num_attention_heads")) -> Attention:
    """Attention whose heads the model fixes: ``num_attention_heads`` heads ``d / heads`` wide, one key and value
    head per query head (or ``kv_heads``), the q, k and v projections (fused or not) and one back.  A
    ``num_key_value_heads`` or ``head_dim`` in the file that says otherwise is refused, not read; ``sizes`` are the
    file's own names of the width and the head count, for the messages."""
    width, count = sizes
    heads = f.need("num_attention_heads")
    if d % heads:
        raise ScenarioError(f"{width} ({d}) is not a multiple of {count} ({heads})", where=f.where, hint=hint)
    hd = d // heads
    kv = heads if kv_heads is None else kv_heads
    for key, value in (("num_key_value_heads", kv), ("head_dim", hd)):
        given = f.optional(key, None, minimum=1)
        if given is not None and given != value:
            raise ScenarioError(f"field '{key}' is {given} but a layer of {mtype} has {value}", where=f.where,
                                hint=hint)
    return Attention(d * (heads + 2 * kv) * hd + d * d, 2 * kv * hd, f"2 (K and V) * {kv} kv heads * {hd} head_dim",
                     hd, kv, heads, head_dim_note=f"{width} / {count} = {hd}",
                     kv_heads_note=(f"multi-head attention: {count} = {heads}" if kv == heads else
                                    f"multi-query attention: {kv} key and value head"))


def renamed_size(read: Fields, out: dict[str, Any], label: str, raw: object, ours: str, renamed: list[str]) -> None:
    """The file's size ``label`` (``raw``) as the reader's ``ours`` in ``out``, a whole number; a file that gives
    ``ours`` as well must give the same number.  ``renamed`` gets the note's part."""
    value = read.whole(label, raw, 1)
    given = read.config.get(ours)
    if given is not None and given != value:
        raise ScenarioError(f"fields '{label}' ({value}) and '{ours}' ({given!r}) disagree", where=read.where)
    out[ours] = value
    renamed.append(f"{label} as {ours}")


@dataclass(frozen=True)
class Linear:
    params_per_layer: int
    state_elements_per_layer: int  # at the KV element size
    formula: str
    state_bytes_per_layer: Fraction = Fraction(0)  # state kept in a datatype of its own (mamba_ssm_dtype)
    kind: str = "linear attention"


KIND_NAMES = {"full_attention": "full", "global": "full", "attention": "full", "sliding_attention": "window",
               "sliding": "window", "local": "window", "chunked_attention": "chunk",
               "linear_attention": "linear"}


def gated(d: int, width: int) -> int:
    """A gated MLP's weights: gate, up and down, three ``d x width`` matrices."""
    return 3 * d * width


@dataclass(frozen=True)
class Mlp:
    """The feed-forward part of every layer, summed: dense MLPs, routed and shared experts, routers."""

    dense_mlp: int = 0
    routed: int = 0
    routed_active: int = 0
    shared: int = 0
    router: int = 0
    moe_layers: int = 0
    experts: int = 0
    active: int = 0
    shared_n: int = 0


def experts_per_token(f: Fields, mtype: str) -> int:
    # OpenAI's own gpt-oss config.json says experts_per_token; transformers says num_experts_per_tok.
    if f.has("num_experts_per_tok") and f.has("experts_per_token"):
        a, b = f.need("num_experts_per_tok", why=mtype), f.need("experts_per_token", why=mtype)
        if a != b:
            raise ScenarioError(f"fields 'num_experts_per_tok' ({a}) and 'experts_per_token' ({b}) disagree",
                                where=f.where)
        return a
    if f.has("experts_per_token"):
        return f.need("experts_per_token", why=mtype)
    return f.need("num_experts_per_tok", why=mtype)


def routed(moe_layers: int, experts: int, active: int, d: int, width: int, **extra: int) -> Mlp:
    """MoE layers of ``experts`` gated experts of ``width``, ``active`` per token, one router each."""
    return Mlp(routed=moe_layers * experts * gated(d, width), routed_active=moe_layers * active * gated(d, width),
               router=moe_layers * d * experts, moe_layers=moe_layers, experts=experts, active=active, **extra)


# --------------------------------------------------------------------------------------------------
# layer kinds

# (layer counts by kind: full / window / chunk / linear, the window, the chunk)
LayerKinds = tuple[dict[str, int], int, int]


def all_full(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    """Every layer attends to the whole context (the default when a config has no ``layer_types``)."""
    return {"full": n, "window": 0, "chunk": 0, "linear": 0}, 0, 0


def uniform_window(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    """Mistral and Mixtral window every layer when sliding_window is set; Qwen2/Qwen3 only with
    use_sliding_window true (transformers' default there is false), from ``max_window_layers`` on."""
    counts = {"full": n, "window": 0, "chunk": 0, "linear": 0}
    window = 0
    f.read.add("sliding_window")
    use = f.get("use_sliding_window", not mtype.startswith("qwen"))
    if sliding is not None and use is True:
        first = f.optional("max_window_layers", 0) if mtype.startswith("qwen") else 0
        first = min(first or 0, n)
        counts.update(full=first, window=n - first)
        window = sliding
        f.notes.append(f"sliding_window = {sliding} on layers {first} to {n - 1}" if first else
                       f"sliding_window = {sliding}: every layer keeps only the last {sliding} tokens")
    return counts, window, 0


def alternate_window(f: Fields, mtype: str, n: int, sliding: int | None) -> LayerKinds:
    """Gemma 2 and gpt-oss: even layers local when a sliding window is set."""
    if sliding is None:
        return all_full(f, mtype, n, sliding)
    f.read.add("sliding_window")
    local = count_every(n, 2)
    f.notes.append("'layer_types' absent: every other layer (0, 2, ...) uses the sliding window "
                   f"({local} of {n})")
    return {"full": n - local, "window": local, "chunk": 0, "linear": 0}, sliding, 0


def listed_kinds(f: Fields, types: Sequence[str], sliding: int | None,
                 names: Mapping[str, str] = KIND_NAMES) -> LayerKinds:
    """The layer kinds a config lists in ``layer_types``, one per layer (``names``: entry -> kind)."""
    counts = {"full": 0, "window": 0, "chunk": 0, "linear": 0}
    window = chunk = 0
    f.read.add("layer_types")
    for t in types:
        kind = names.get(t)
        if kind is None:
            raise ScenarioError(f"field 'layer_types' has an unknown layer kind {t!r}", where=f.where,
                                hint=f"known kinds: {', '.join(sorted(names))}")
        counts[kind] += 1
    if counts["window"]:
        f.read.add("sliding_window")
        window = sliding or 0
        if not window:
            raise ScenarioError("missing field 'sliding_window'", where=f.where,
                                hint="layer_types has sliding_attention layers")
    if counts["chunk"]:
        chunk = f.need("attention_chunk_size", why="chunked-attention")
    return counts, window, chunk


@dataclass(frozen=True)
class Blocks:
    """Layers that differ one by one (a NAS model's ``block_configs``, the full and sliding layers of MiMo and
    Gemma 4), summed: attention weights, the layers that keep a KV cache and their elements per token, the MLPs.
    ``attention`` describes the full-attention layers when they agree (head_dim and kv_heads None when they do
    not); ``window_attention`` one sliding-window layer, ``window_layers`` of them keeping the last ``window``
    tokens."""

    attention: Attention
    attention_params: int
    full_layers: int
    full_elements: int
    mlp: Mlp
    # windowed layers with an attention of their own (MiMo's and Gemma 4's sliding layers: other heads, other sizes)
    window_layers: int = 0
    window: int = 0
    window_attention: Attention | None = None
    # Gemma 4 E2B/E4B: layers that reuse another layer's cache (their attention weights are in attention_params,
    # their cache nowhere), the per-layer table looked up per token and the projections of its rows
    shared_full_layers: int = 0
    shared_window_layers: int = 0
    per_layer_embedding: int = 0
    per_layer_inputs: int = 0
    per_layer_row: int = 0  # parameters of one token's row of the per-layer table


# --------------------------------------------------------------------------------------------------
# a family


def default_attention(f: Fields, mtype: str, d: int) -> Attention:
    return gqa(f, d)


@dataclass(frozen=True)
class Family:
    """How one family's configs lay out their layers.

    ``model_types`` maps each ``model_type`` to transformers' ``tie_word_embeddings`` default for its
    config class; ``architectures`` maps class names to a ``model_type``.  ``mlp`` counts the feed-forward
    weights of all layers; ``attention`` reads one attention layer; ``pattern`` gives the layer kinds when
    the config has no ``layer_types``; ``linear`` reads one linear-attention layer (None: the family has
    none); ``class_defaults`` are fields transformers' config class fills in when the file leaves them
    out; ``notes`` adds the family's conventions to the notes; ``kind_names`` adds the family's own
    ``layer_types`` entries; ``own_layer_types`` hands ``layer_types`` to ``pattern`` instead; ``renames`` gives
    the reader's field names to a family whose files name or nest their sizes their own way (DBRX's ``d_model``,
    ``attn_config``, ``ffn_config``), each renaming said in a note; ``positions`` counts a learned position table
    (GPT-2's ``wpe``), looked up per token like the token table.
    """

    name: str
    model_types: Mapping[str, bool]
    architectures: Mapping[str, str]
    mlp: Callable[[Fields, str, int, int], Mlp]
    attention: Callable[[Fields, str, int], Attention] = default_attention
    pattern: Callable[[Fields, str, int, int | None], LayerKinds] = all_full
    linear: Callable[[Fields, int], Linear] | None = None
    class_defaults: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    notes: Callable[[Fields, str, Attention], None] | None = None
    latent: bool = False  # multi-head latent attention (kv_lora_rank is read)
    aliases: Mapping[str, str] = field(default_factory=dict)  # older model_type names -> model_type
    blocks: Callable[[Fields, str, int, int], Blocks] | None = None  # per-layer blocks instead of a pattern
    known: frozenset[str] = frozenset()  # fields of the family's files that set no size (gpt-oss's swiglu_limit)
    # layer_types entries this family's files use beyond KIND_NAMES (Granite 4's "mamba" -> "linear")
    kind_names: Mapping[str, str] = field(default_factory=dict)
    own_layer_types: bool = False  # ``pattern`` reads layer_types itself (Falcon-H1's "hybrid", Jamba's periods)
    # the file's own names -> the reader's: (the mapping with the reader's names added, one note per renaming)
    renames: Callable[[Mapping[str, Any], str], tuple[Mapping[str, Any], list[str]]] | None = None
    # a learned position table's parameters (GPT-2's n_positions x n_embd, OPT's max_position_embeddings + 2 rows),
    # the family's note said; None: no such table (rotary or ALiBi positions, nothing to count)
    positions: Callable[[Fields, str, int], int] | None = None


# Fields that set no layer kind and no tensor shape: metadata, numerics, training and routing settings.
# A file of an unknown model_type is read only when every other field it holds was read by its family.
NEUTRAL_FIELDS = frozenset({
    "architectures", "model_type", "auto_map", "transformers_version", "torch_dtype", "dtype",
    "quantization_config", "max_position_embeddings", "tie_word_embeddings", "use_cache", "initializer_range",
    "hidden_act", "hidden_activation", "activation", "mlp_hidden_act", "rope_theta", "rope_scaling",
    "rope_parameters", "partial_rotary_factor", "attention_bias", "mlp_bias", "use_bias", "bias",
    "router_aux_loss_coef", "output_router_logits", "norm_topk_prob", "routed_scaling_factor", "scoring_func",
    "topk_method", "n_group", "topk_group", "aux_loss_alpha", "seq_aux", "num_logits_to_keep", "pretraining_tp",
    "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar", "residual_in_fp32",
    "rescale_prenorm_residual", "is_encoder_decoder", "use_qk_norm", "qk_layernorm", "router_jitter_noise",
    "num_nextn_predict_layers", "mtp_num_hidden_layers", "parallel_attn", "alibi", "cache_implementation",
    "for_llm_compressor",
})
_NEUTRAL_PARTS = ("_token_id", "dropout", "_eps", "epsilon", "_softcap")


# Every layout an unknown type can be read as (``registry.guess_family``) has a SiLU-gated MLP: gate, up and down.
# An activation field naming anything else says the file's MLP may be another (StarCoder2's ungated GELU c_fc and
# c_proj: two matrices, not three), so a guessed read stops there.  Known families are read by their own code.
ACTIVATION_FIELDS = ("hidden_act", "hidden_activation", "activation", "mlp_hidden_act")
GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu"})


def guessed_shape_conflicts(cfg: Mapping[str, Any]) -> list[str]:
    """Neutral fields whose value changes a tensor's shape or count under a guessed layout: an activation that is
    not SiLU/SwiGLU (the guessed layouts' gated MLP may not be the file's), an encoder-decoder model (a second
    stack the decoder-only layouts do not have).  Each entry names the field and its value."""
    out = [f"{key} {cfg[key]!r}" for key in ACTIVATION_FIELDS
           if cfg.get(key) is not None
           and not (isinstance(cfg[key], str) and cfg[key].lower() in GATED_ACTIVATIONS)]
    if cfg.get("is_encoder_decoder") not in (None, False):
        out.append(f"is_encoder_decoder {cfg['is_encoder_decoder']!r}")
    return out


def neutral(key: str) -> bool:
    """Whether a field sets neither a layer kind nor a tensor shape (``NEUTRAL_FIELDS`` and names like
    ``eos_token_id``, ``attention_dropout``, ``rms_norm_eps``, ``rope_*``); ``_comment`` and other names
    starting with ``_`` are not part of the model."""
    return (key in NEUTRAL_FIELDS or key.startswith(("_", "rope", "initializer_"))
            or any(p in key for p in _NEUTRAL_PARTS))


def state_dtype_bytes(f: Fields, key: str, name: object) -> Fraction:
    """Bytes per element of a recurrent state kept in the datatype ``name`` that field ``key`` gives (Mamba's
    ``mamba_ssm_dtype``, ``mamba_ssm_cache_dtype``); one line naming the field for a name it does not know."""
    if not isinstance(name, str) or name.removeprefix("torch.") not in DTYPE_BYTES:
        raise ScenarioError(f"field '{key}' names an unknown datatype {name!r}", where=f.where,
                            hint=f"known: {', '.join(sorted(DTYPE_BYTES))}")
    return DTYPE_BYTES[name.removeprefix("torch.")]
