"""From harness logs to a decision: choose items, write the harness's manifest, read results back, estimate and rank."""
