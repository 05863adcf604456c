"""The prompt and layout generators that training and the benchmarks share: one package, imported openly by both
(layering: ``training`` -> ``benchmarks`` -> ``synthesis`` -> ``tpc_core``, and ``training`` -> ``synthesis``).

* the open-ended generator for the request finder: prompts composed from random parts on many axes
  (shell, wrapper vocabulary, header lines, request position and style, distractors, questions inside the
  material, instructions, prompts that ask nothing), with the request's exact character spans and its clean
  words. Modules: :mod:`~synthesis.parts` (the tables and the span-tracking builder), :mod:`~synthesis.material`
  (evidence-keeping excerpts), :mod:`~synthesis.requests` (request styles; what is labelled as the request),
  :mod:`~synthesis.shells` (chat templates, key-value formats, markup, documents) and
  :mod:`~synthesis.generator` (one draw per axis; held-out parts);
* :mod:`~synthesis.layouts` (17 fixed prompt layouts, 8 held out), :mod:`~synthesis.instructions` (instruction
  families and prompt shapes), :mod:`~synthesis.passages` (passage styles) and :mod:`~synthesis.templates`
  (LongBench and qa_dev task templates).

Not shipped in the wheel (``pyproject.toml`` packages only ``tpc_core`` and ``tpc_integrations``).
"""

from synthesis.generator import AXES, HELD_OUT_PARTS, Components, Generated, generate, generate_without

__all__ = ["AXES", "HELD_OUT_PARTS", "Components", "Generated", "generate", "generate_without"]
