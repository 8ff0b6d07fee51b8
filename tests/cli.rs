//! Placeholder until the CLI tests land.
