"""Seed files of the consistent CRM world (a package so the files ship in the wheel); written by
`python -m myna.mocks.backends.crm.world -o myna/mocks/backends/crm/reference_world`."""
