"""The built-in ERP-like (procure-to-pay) back end: corpus, reference service, rules, model."""
