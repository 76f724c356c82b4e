from fcenv.cli import main

raise SystemExit(main())
