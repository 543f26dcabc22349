import sys

from mux.daemon import main

sys.exit(main())
