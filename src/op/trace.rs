//! Human-readable descriptions of machine steps (filled in by the trace command).
