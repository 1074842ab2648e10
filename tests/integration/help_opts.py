"""help_opts: one option's text in a subcommand's --help, and a default --help gives against the
value a run took (for defaults.sh and ipc.sh)."""

import re


def opt(help_text, name):
    """The text of --NAME: from its line to the next option's or group's, on one line."""
    m = re.search(r"^ {2,6}--%s \S+(.*?)(?=^ {2,6}-|^\S|\Z)" % re.escape(name), help_text,
                  re.S | re.M)
    assert m, name
    return " ".join(m.group(1).split())


def same(what, want, got):
    assert want == got, (what, "help says", want, "the run took", got)
    print(f"{what}: help {want}, run {got}")
