"""Stage 5: ITSMBench, ITSM scenarios seeded from operational ticket data."""
