"""The Kubernetes REST API as the agent speaks it: one resource type (``resource.py``), one pure
request builder (``request.py``) and the one place requests go out over the process's httpx2
client (``transport.py``). Below every other package: all of them, the runtime included, may
import it, and it imports nothing of the product."""
