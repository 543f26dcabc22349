"""A note-taking REPL that speaks application-resurrection/1: `python -m mux.demo.notes`.

    open PATH    start (or continue) a notes file; mux keeps its path as a checkpoint
    add TEXT     append a note
    show         print the notes
    close        forget the file (the checkpoint is cleared)
    quit

Run it in a mux pane, open a file, then restart mux (or log out and back in):
the relaunched REPL is handed the path back and reopens the file by itself.
The path is all mux ever holds; the notes stay in their file.
"""

import sys
from pathlib import Path

from mux.resurrection.client import Refused, ResurrectionClient


def main() -> int:
    try:
        mux = ResurrectionClient.connect("mux-notes")
    except (OSError, Refused) as e:
        print(f"(no resurrection: {e})")
        mux = None
    notes: Path | None = None
    if mux is not None and mux.offer is not None:
        notes = Path(mux.offer)
        count = len(notes.read_text().splitlines()) if notes.exists() else 0
        print(f"reopened {notes} ({count} notes)")
    elif mux is not None:
        print("a fresh start (nothing to reopen)")
    while True:
        print("notes> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            return 0
        command, _, rest = line.strip().partition(" ")
        if command == "quit":
            return 0
        if command == "open" and rest:
            notes = Path(rest).expanduser().resolve()
            notes.touch()
            if mux is not None:
                generation = mux.checkpoint(str(notes))
                print(f"opened {notes} (checkpoint {generation})")
            else:
                print(f"opened {notes}")
        elif command == "add" and notes is not None:
            with notes.open("a") as f:
                f.write(rest + "\n")
            print("added")
        elif command == "show" and notes is not None:
            print(notes.read_text(), end="")
        elif command == "close":
            notes = None
            if mux is not None:
                mux.clear()
            print("closed")
        else:
            print("commands: open PATH, add TEXT, show, close, quit")


if __name__ == "__main__":
    sys.exit(main())
