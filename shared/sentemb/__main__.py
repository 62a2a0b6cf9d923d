from sentemb.cli import main

if __name__ == "__main__":  # worker processes (spawn) import this module again and must not run the command line
    raise SystemExit(main())
