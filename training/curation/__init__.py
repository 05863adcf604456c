"""Stage 1 of TPC training: data curation.

* CTD (paper Section 3.2.1, Algorithm 2): ``(p_struct, q)`` pairs -- :mod:`.ctd` with Prompts 1 and 2.
* MCQR (Section 3.4.1): multi-hop question, context sentences, positives, negatives -- :mod:`.mcqr`
  with Prompt 3.
* :mod:`.converters` builds both from human-annotated QA (the ``train`` split) without an LLM.
* :mod:`.generators`: local transformers model or OpenAI-compatible API, behind an on-disk cache.

Run ``python -m training.curation --config training/configs/curation_qa_train.yaml``.
"""

from training.curation.config import CurationConfig
from training.curation.pipeline import run_curation

__all__ = ["CurationConfig", "run_curation"]
