"""Data shipped with ITSMBench: the synthetic default export (see myna.itsm.synthetic)."""
