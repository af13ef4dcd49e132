"""artifact."""
