"""What a call returns: :class:`~.result.CompressionResult`, its :class:`~.sentence.SentenceRecord` rows, and the HTML
view (:mod:`.render`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tpc_core.lazy import lazy_exports

# Each public name and the module that defines it, imported on first use (tpc_core.lazy).
_EXPORTS = {
    "render_html": "tpc_core.engine.output.render",
    "CompressionResult": "tpc_core.engine.output.result",
    "to_result": "tpc_core.engine.output.result",
    "SentenceRecord": "tpc_core.engine.output.sentence",
}

# GENERATED below from _EXPORTS (python -m tpc_core.options --write); do not edit
__all__ = ["CompressionResult", "SentenceRecord", "render_html", "to_result"]

if TYPE_CHECKING:
    from tpc_core.engine.output.render import render_html as render_html
    from tpc_core.engine.output.result import CompressionResult as CompressionResult
    from tpc_core.engine.output.result import to_result as to_result
    from tpc_core.engine.output.sentence import SentenceRecord as SentenceRecord
# end of the generated names

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
