"""Multi-turn episodes: executing calls on tool backends and judging turns by BFCL's rules."""
