"""``python -m tpc_core`` runs the ``tpc`` command."""

from tpc_core.cli import main

raise SystemExit(main())
