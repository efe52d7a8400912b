"""The built-in CRM back end (Salesforce REST API style): corpus, overlay and learned model."""
