"""The ``syncagent`` command line: one module per subcommand."""
