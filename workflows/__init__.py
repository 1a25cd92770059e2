"""The Temporal side of skillweave: ``AgentWorkflow`` (one per run), the ``TemporalRuntime``
it runs the agent loop through, and the worker that hosts both with the activities."""
