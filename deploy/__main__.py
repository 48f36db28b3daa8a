"""Deploy, command line: `python -m deploy [--stay-up]` (see deploy.launcher),
`python -m deploy certs --cluster FILE --out DIR` (see deploy.certs) and
`python -m deploy health HOST:PORT` (see deploy.health)."""

import sys

if sys.argv[1:2] == ["certs"]:
    from deploy.certs import main as certs_main

    sys.exit(certs_main(sys.argv[2:]))
if sys.argv[1:2] == ["health"]:
    from deploy.health import main as health_main

    sys.exit(health_main(sys.argv[2:]))

from deploy.launcher import main  # noqa: E402

sys.exit(main())
