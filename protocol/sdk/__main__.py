"""``python -m protocol.sdk --host H --port P --token T --name N --bot module:function``."""

import sys

from protocol.sdk.runner import main

sys.exit(main())
