"""`python -m covlib.cli`."""
import sys

from covlib.cli.main import main

sys.exit(main())
