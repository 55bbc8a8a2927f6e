from mlcompare.cli import main

raise SystemExit(main())
