"""`python -m rlm_desktop` is `rlm-desktop`."""

import sys

from rlm_desktop.cli import main

sys.exit(main())
