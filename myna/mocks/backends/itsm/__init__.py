"""The ITSM back end: ServiceNow Table API style, learned from a shipped trace corpus."""
