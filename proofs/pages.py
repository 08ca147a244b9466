"""`python -m proofs.pages`: regenerate `docs/variants.md` and `docs/casebook.md`
(`--page NAME`: one of them; `--check`: compare only).

The generator is `proofs.report.pages`; this entry keeps the command the page
itself names.
"""

import sys

from proofs.report.pages import main

if __name__ == "__main__":
    sys.exit(main())
