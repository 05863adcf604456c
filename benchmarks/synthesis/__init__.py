"""An open-ended prompt generator for the request finder (issue 35): prompts composed from random parts on many
axes (shell, wrapper vocabulary, header lines, request position and style, distractors, questions inside the
material, instructions, prompts that ask nothing), with the request's exact character spans and its clean words.

Modules: :mod:`~benchmarks.synthesis.parts` (the tables and the span-tracking builder),
:mod:`~benchmarks.synthesis.material` (evidence-keeping excerpts), :mod:`~benchmarks.synthesis.requests` (request
styles; what is labelled as the request), :mod:`~benchmarks.synthesis.shells` (chat templates, key-value formats,
markup, documents) and :mod:`~benchmarks.synthesis.generator` (one draw per axis; held-out parts).
"""

from benchmarks.synthesis.generator import AXES, HELD_OUT_PARTS, Components, Generated, generate, generate_without

__all__ = ["AXES", "HELD_OUT_PARTS", "Components", "Generated", "generate", "generate_without"]
