"""The ``syncagent`` command line: one package per command, listed in the command table
(``cli.main.COMMANDS``).

A command's package is the whole command: its ``__init__`` declares the flags (imported for
every invocation, so it imports no implementation), its other modules what it does and prints
(imported only when it runs, ``cli/lazy.py``). What more than one command uses sits beside
them: the flags they share (``flags.py``), the manifest input (``manifestfile.py``), the error
boundary (``boundary.py``, ``errors.py``) and the pathways (``pathways.py``).
"""
