"""Beyond the lecture: prefill, speculative decoding, parallel layouts, per-step overhead, collectives and the
network, throughput and saturation, and prefill/decode disaggregation, on the lecture's quantities.

Part II of the documents.  The chapters build on the lecture's quantities (imported from its modules), so
the lecture's topics come first in ``TOPICS``: ``--library serving`` alone loads them, and
``--library lecture --library serving`` loads each module once (a module listed twice adds nothing).
Presets are the lecture's.  ``derive`` finds this package through the ``derive.libraries`` entry point named
``serving``.
"""

from __future__ import annotations

# the lecture's library attributes, read by derive.model.loader (each taken once when both libraries are loaded):
# its presets, figures, headlines, config reader and finder, ceilings, audit bounds, feasibility constraints, card
# and floor
from theorems import (  # noqa: F401
    AUDIT_BOUNDS,
    CARD,
    CEILINGS,
    FEASIBILITY,
    FIGURES,
    HEADLINES,
    MODEL_CONFIG_FINDER,
    MODEL_CONFIG_READER,
    PREDICT_METRIC,
    PRESET_DIRS,
)
from theorems import TOPICS as LECTURE_TOPICS

from . import disaggregation, layouts, network, overhead, prefill, saturation, speculative

# the whole document's title when this library is loaded (its part II is "Beyond the lecture")
TITLE = ("The math behind how LLMs are trained and served, and beyond: the lecture and the serving library "
         "as checked math")
SERVING_TOPICS = [prefill, speculative, layouts, overhead, network, saturation, disaggregation]
TOPICS = [*LECTURE_TOPICS, *SERVING_TOPICS]
