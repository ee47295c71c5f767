"""What the CLI commands do; their flags are declared in ``syncagent.cli.<command>``."""
