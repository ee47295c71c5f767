"""The agent's runtime: client, discovery, watches and caches, work queue, leader election,
metrics and probes, events, logging and shutdown (docs/runtime.md). Nothing here knows Dynamo."""
