"""Let ``python -m minigrad.course ...`` run the course command line."""
from minigrad.course.cli import main

raise SystemExit(main())
