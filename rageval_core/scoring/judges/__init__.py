"""Several judge configurations in one run, the jury over them, and their agreement (see each module)."""
