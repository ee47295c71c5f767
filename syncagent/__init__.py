"""syncagent keeps NVIDIA Dynamo inference graphs deployed through server-side apply."""

__version__ = "0.1.0"
