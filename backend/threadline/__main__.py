import sys

from threadline.cli import main

sys.exit(main())
