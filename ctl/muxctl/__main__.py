import sys

from muxctl.main import main

sys.exit(main())
