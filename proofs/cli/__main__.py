"""`python -m proofs.cli ARGS` is `ackguard ARGS`."""

import sys

from proofs.cli.main import main

sys.exit(main())
