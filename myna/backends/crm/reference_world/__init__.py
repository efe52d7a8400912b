"""Seed files of the consistent CRM world (a package so the files ship in the wheel); written by
`python -m myna.backends.crm.world -o myna/backends/crm/reference_world`."""
