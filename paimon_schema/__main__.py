"""`python -m paimon_schema`: the `paimon-schema` command line."""

import sys

from paimon_schema.cli.main import main

sys.exit(main())
