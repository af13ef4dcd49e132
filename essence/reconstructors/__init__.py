"""reconstructors."""
