from sentemb.cli import main

raise SystemExit(main())
