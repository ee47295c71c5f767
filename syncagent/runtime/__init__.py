"""The agent's runtime: client, discovery, watches and caches, work queue, leader election,
metrics and probes, events, logging and shutdown (design.md §5). Nothing here knows Dynamo."""
