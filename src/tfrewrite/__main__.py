"""`python -m tfrewrite` runs the command line."""

from tfrewrite.cli import main

if __name__ == "__main__":
    main()
